package procfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestProcFS: a recorded process still running in another mount
// namespace has its JIT files looked up under /proc/PID/root, its perf
// map under its PID in its own PID namespace; a process in this
// namespace, one of another name now holding the PID, or one that ended
// has them taken as recorded. The proc file system here is a tree of
// files as /proc has them.
func TestFS(t *testing.T) {
	proc := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		testenv.WriteFile(t, filepath.Join(proc, name), []byte(data))
	}
	ns := func(pid, id string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(proc, pid, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("mnt:["+id+"]", filepath.Join(proc, pid, "ns", "mnt")); err != nil {
			t.Fatal(err)
		}
	}
	ns("self", "4026531841")
	// 100: node in a container, PID 1 there, its perf map and jitdump
	// in its /tmp.
	ns("100", "4026532500")
	write("100/comm", "node\n")
	write("100/status", "Name:\tnode\nNSpid:\t100\t1\n")
	write("100/root/tmp/perf-1.map", "1000 10 fib\n")
	write("100/root/tmp/jit-1.dump", "JiTD")
	// 150: in a container whose /tmp is a link to the machine's (here:
	// to 100's), and whose perf map links elsewhere too.
	ns("150", "4026532700")
	write("150/comm", "node\n")
	write("150/status", "NSpid:\t150\t1\n")
	write("150/root/etc/x", "")
	if err := os.Symlink(filepath.Join(proc, "100/root/tmp"), filepath.Join(proc, "150/root/tmp")); err != nil {
		t.Fatal(err)
	}
	ns("160", "4026532800")
	write("160/comm", "node\n")
	write("160/status", "NSpid:\t160\t1\n")
	write("160/root/tmp/jit-2.dump", "")
	if err := os.Symlink(filepath.Join(proc, "100/root/tmp/perf-1.map"), filepath.Join(proc, "160/root/tmp/perf-1.map")); err != nil {
		t.Fatal(err)
	}
	// 200: a process in this namespace.
	ns("200", "4026531841")
	write("200/comm", "node\n")
	// 300: in a container, but another program now.
	ns("300", "4026532600")
	write("300/comm", "bash\n")
	write("300/status", "NSpid:\t300\t1\n")
	write("300/root/tmp/perf-1.map", "1000 10 other\n")

	fs := New(proc)
	for _, tc := range []struct {
		pid        uint32
		comm, path string
		want       string
		wantMap    string
	}{
		{100, "node", "/tmp/jit-1.dump", filepath.Join(proc, "100/root/tmp/jit-1.dump"), filepath.Join(proc, "100/root/tmp/perf-1.map")},
		{100, "", "/tmp/jit-1.dump", filepath.Join(proc, "100/root/tmp/jit-1.dump"), filepath.Join(proc, "100/root/tmp/perf-1.map")},
		{100, "node", "/tmp/jit-9.dump", "/tmp/jit-9.dump", filepath.Join(proc, "100/root/tmp/perf-1.map")}, // not there
		{100, "node", "jit-1.dump", "jit-1.dump", filepath.Join(proc, "100/root/tmp/perf-1.map")},           // relative
		{150, "node", "/tmp/jit-1.dump", "/tmp/jit-1.dump", ""},                                             // a link on the way
		{160, "node", "/tmp/jit-2.dump", filepath.Join(proc, "160/root/tmp/jit-2.dump"), ""},                // the map a link
		{200, "node", "/tmp/jit-1.dump", "/tmp/jit-1.dump", ""},
		{300, "node", "/tmp/jit-1.dump", "/tmp/jit-1.dump", ""},
		{400, "node", "/tmp/jit-1.dump", "/tmp/jit-1.dump", ""}, // ended
	} {
		if got := fs.Path(tc.pid, tc.comm, tc.path); got != tc.want {
			t.Errorf("Path(%d, %q, %s) = %s, want %s", tc.pid, tc.comm, tc.path, got, tc.want)
		}
		if got := fs.PerfMap(tc.pid, tc.comm); got != tc.wantMap {
			t.Errorf("PerfMap(%d, %q) = %q, want %q", tc.pid, tc.comm, got, tc.wantMap)
		}
	}
	// Without a proc file system, files are taken as recorded.
	if got := New("").Path(100, "node", "/tmp/jit-1.dump"); got != "/tmp/jit-1.dump" {
		t.Errorf("no /proc: %s", got)
	}
}
