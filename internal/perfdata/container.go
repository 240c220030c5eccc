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
	if in, ok := fs.inRoot(pid, comm, path); ok {
		return in
	}
	return path
}

// inRoot returns the regular file at the absolute path in the file system
// of the process pid (recorded as comm), if it runs in a container:
// /proc/PID/root/PATH. A symbolic link on the way is not followed: from
// here it would resolve against this file system's root, not the
// container's, and a container could have pprof read any file of the
// machine as its perf map.
func (fs procFS) inRoot(pid uint32, comm, path string) (string, bool) {
	if !filepath.IsAbs(path) || !fs.inContainer(pid, comm) {
		return "", false
	}
	return fs.underRoot(pid, path)
}

// underRoot is inRoot for a process known to run in a container.
func (fs procFS) underRoot(pid uint32, path string) (string, bool) {
	at := filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10), "root")
	for _, part := range strings.Split(filepath.Clean(path), "/")[1:] {
		at = filepath.Join(at, part)
		st, err := os.Lstat(at)
		if err != nil || st.Mode()&os.ModeSymlink != 0 {
			return "", false
		}
	}
	return at, fileExists(at)
}

// perfMap returns the perf map of the process pid (recorded as comm):
// the one in its container, under its PID there (/tmp/perf-NSPID.map,
// NSPID the last of its status's NSpid line: its PID in each PID
// namespace it is in, outermost first), or /tmp/perf-PID.map; "" if
// there is none.
func (fs procFS) perfMap(pid uint32, comm string) string {
	if fs.inContainer(pid, comm) {
		nspid := pid
		b, _ := os.ReadFile(filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10), "status"))
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					if n, err := strconv.ParseUint(f[len(f)-1], 10, 32); err == nil {
						nspid = uint32(n)
					}
				}
			}
		}
		if m, ok := fs.underRoot(pid, fmt.Sprintf("/tmp/perf-%d.map", nspid)); ok {
			return m
		}
	}
	if m := fmt.Sprintf("/tmp/perf-%d.map", pid); fileExists(m) {
		return m
	}
	return ""
}
