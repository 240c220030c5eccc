package perfdata

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A procFS finds the files of the recorded processes that are still
// running in other mount namespaces (containers), as perf report does:
// a process's JIT writes its jitdump and perf map in its own file system,
// under its own PID (/tmp/perf-NSPID.map), where this process reaches
// them as /proc/PID/root/tmp/perf-NSPID.map while the process lives.
type procFS struct {
	dir    string // "" for none: files are taken as recorded
	selfNS string // this process's mount namespace
}

// newProcFS returns the procFS of the proc file system at dir ("" for
// none).
func newProcFS(dir string) procFS {
	if dir == "" {
		return procFS{}
	}
	self, err := os.Readlink(filepath.Join(dir, "self", "ns", "mnt"))
	if err != nil {
		return procFS{}
	}
	return procFS{dir: dir, selfNS: self}
}

// inContainer reports whether the process pid is running in another
// mount namespace than this one, and is the process recorded as comm (if
// comm is known): a process of another name now holding pid (the
// recorded one has ended, or the recording comes from another machine)
// is not looked into.
func (fs procFS) inContainer(pid uint32, comm string) bool {
	if fs.dir == "" || pid == 0 || pid == ^uint32(0) {
		return false
	}
	proc := filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10))
	ns, err := os.Readlink(filepath.Join(proc, "ns", "mnt"))
	if err != nil || ns == fs.selfNS {
		return false
	}
	if comm != "" {
		b, err := os.ReadFile(filepath.Join(proc, "comm"))
		if err != nil || strings.TrimSuffix(string(b), "\n") != comm {
			return false
		}
	}
	return true
}

// path returns the file at path as the process pid (recorded as comm)
// sees it: under /proc/PID/root if it runs in a container and the file
// is there, else path.
func (fs procFS) path(pid uint32, comm, path string) string {
	if !filepath.IsAbs(path) || !fs.inContainer(pid, comm) {
		return path
	}
	in := filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10), "root", path)
	if fileExists(in) {
		return in
	}
	return path
}

// perfMap returns the perf map of the process pid (recorded as comm):
// /tmp/perf-PID.map, or the one in its container, under its PID there;
// "" if there is none.
func (fs procFS) perfMap(pid uint32, comm string) string {
	if fs.inContainer(pid, comm) {
		nspid := pid
		b, _ := os.ReadFile(filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10), "status"))
		for _, line := range strings.Split(string(b), "\n") {
			// NSpid: its PID in each PID namespace it is in, outermost
			// first.
			if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					if n, err := strconv.ParseUint(f[len(f)-1], 10, 32); err == nil {
						nspid = uint32(n)
					}
				}
			}
		}
		if m := fs.path(pid, comm, fmt.Sprintf("/tmp/perf-%d.map", nspid)); m != fmt.Sprintf("/tmp/perf-%d.map", nspid) {
			return m
		}
	}
	if m := fmt.Sprintf("/tmp/perf-%d.map", pid); fileExists(m) {
		return m
	}
	return ""
}
