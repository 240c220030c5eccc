// Package procfs finds the files of a process as the process sees them,
// through the proc file system: under /proc/PID/root when it runs in
// another mount namespace (a container), and named after its PID in its
// own PID namespace. The perf.data reader finds a recorded process's JIT
// files with it, as perf report does, and -jit_pid copies a live
// process's. It also reads a process's memory map ([ParseMaps]: jitsnap
// finds a live process's JIT objects by it) and this process's vDSO.
package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// An FS finds the files of the recorded processes that are still
// running in other mount namespaces (containers), as perf report does:
// a process's JIT writes its jitdump and perf map in its own file system,
// under its own PID (/tmp/perf-NSPID.map), where this process reaches
// them as /proc/PID/root/tmp/perf-NSPID.map while the process lives.
type FS struct {
	dir    string // "" for none: files are taken as recorded
	selfNS string // this process's mount namespace
}

// New returns the FS of the proc file system at dir (/proc; "" for
// none: every file is taken as named).
func New(dir string) FS {
	if dir == "" {
		return FS{}
	}
	self, err := os.Readlink(filepath.Join(dir, "self", "ns", "mnt"))
	if err != nil {
		return FS{}
	}
	return FS{dir: dir, selfNS: self}
}

// InContainer reports whether the process pid is running in another
// mount namespace than this one, and is the process recorded as comm (if
// comm is known): a process of another name now holding pid (the
// recorded one has ended, or the recording comes from another machine)
// is not looked into.
func (fs FS) InContainer(pid uint32, comm string) bool {
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

// Path returns the file at path as the process pid (recorded as comm)
// sees it: under /proc/PID/root if it runs in a container and the file
// is there, else path.
func (fs FS) Path(pid uint32, comm, path string) string {
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
func (fs FS) inRoot(pid uint32, comm, path string) (string, bool) {
	if !filepath.IsAbs(path) || !fs.InContainer(pid, comm) {
		return "", false
	}
	return fs.underRoot(pid, path)
}

// underRoot is inRoot for a process known to run in a container.
func (fs FS) underRoot(pid uint32, path string) (string, bool) {
	at := filepath.Join(fs.dir, strconv.FormatUint(uint64(pid), 10), "root")
	for _, part := range strings.Split(filepath.Clean(path), "/")[1:] {
		at = filepath.Join(at, part)
		st, err := os.Lstat(at)
		if err != nil || st.Mode()&os.ModeSymlink != 0 {
			return "", false
		}
	}
	return at, isRegular(at)
}

// NSPID returns the PID of process pid in its own PID namespace: the last
// of its status's NSpid line (its PID in each PID namespace it is in,
// outermost first), or pid if that cannot be read.
func (fs FS) NSPID(pid uint32) uint32 {
	dir := fs.dir
	if dir == "" {
		dir = "/proc"
	}
	b, _ := os.ReadFile(filepath.Join(dir, strconv.FormatUint(uint64(pid), 10), "status"))
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.ParseUint(f[len(f)-1], 10, 32); err == nil {
					return uint32(n)
				}
			}
		}
	}
	return pid
}

// PerfMap returns the perf map of the process pid (recorded as comm):
// the one in its container, under its PID there (/tmp/perf-NSPID.map,
// NSPID the last of its status's NSpid line: its PID in each PID
// namespace it is in, outermost first), or /tmp/perf-PID.map; "" if
// there is none.
func (fs FS) PerfMap(pid uint32, comm string) string {
	if fs.InContainer(pid, comm) {
		if m, ok := fs.underRoot(pid, fmt.Sprintf("/tmp/perf-%d.map", fs.NSPID(pid))); ok {
			return m
		}
	}
	if m := fmt.Sprintf("/tmp/perf-%d.map", pid); isRegular(m) {
		return m
	}
	return ""
}

// isRegular reports whether path is a regular file (following links).
func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
