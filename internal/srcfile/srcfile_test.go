package srcfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestName checks each kind of name where upstream pprof's source views
// look for it (report.openSourceFile, with the working directory as the
// search path), against a tree of a regular file, a directory and FIFOs.
func TestName(t *testing.T) {
	root := t.TempDir()
	wd := filepath.Join(root, "proj", "build")
	mkdir := func(d string) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(wd)
	mkdir(filepath.Join(root, "proj", "src"))
	fifo := func(p string) {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "proj", "src", "ok.c"), []byte("int main;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo(filepath.Join(root, "proj", "src", "pipe.c"))
	fifo(filepath.Join(root, "twice.c"))
	fifo(filepath.Join(root, "twice.c"+Suffix))
	if err := os.Symlink(filepath.Join(root, "proj", "src", "pipe.c"), filepath.Join(root, "link.c")); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(root, "proj", "src", "pipe.c")
	for _, tc := range []struct {
		file, want string
		warn       string // in the warning, if any
	}{
		{file: ""},
		{file: filepath.Join(root, "proj", "src", "ok.c")},
		{file: filepath.Join(root, "proj", "src")},                                   // a directory fails at its first read
		{file: filepath.Join(root, "missing.c")},                                     // not found: upstream says so
		{file: pipe, want: pipe + Suffix, warn: "is a FIFO"},                         // absolute
		{file: "src/pipe.c", want: "src/pipe.c" + Suffix, warn: pipe + " is a FIFO"}, // found in a parent of the working directory
		{file: "src/ok.c"},
		// Upstream's trimPath: the part after the working directory's
		// base name, and after /proc/self/cwd/.
		{file: "/elsewhere/build/../src/pipe.c", want: "/elsewhere/build/../src/pipe.c" + Suffix, warn: "is a FIFO"},
		{file: "/proc/self/cwd/src/pipe.c", want: "/proc/self/cwd/src/pipe.c" + Suffix},
		{file: filepath.Join(root, "link.c"), want: filepath.Join(root, "link.c") + Suffix, warn: "link.c is a FIFO"},
		{file: "/dev/urandom", want: "/dev/urandom" + Suffix, warn: "/dev/urandom is a character device"},
		// A FIFO under the name with the suffix too: no name at all.
		{file: filepath.Join(root, "twice.c"), want: "", warn: `named ""`},
	} {
		var warnings []string
		g := newIn(wd, func(msg string) { warnings = append(warnings, msg) })
		want := tc.file
		if tc.want != "" || tc.warn != "" {
			want = tc.want
		}
		for range 2 { // said once
			if got := g.Name(tc.file); got != want {
				t.Errorf("Name(%q) = %q, want %q", tc.file, got, want)
			}
		}
		switch {
		case want == tc.file && len(warnings) != 0:
			t.Errorf("Name(%q): warnings %q, want none", tc.file, warnings)
		case want != tc.file && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warn) || !strings.Contains(warnings[0], "source file "+tc.file)):
			t.Errorf("Name(%q): warnings %q, want one saying %q", tc.file, warnings, tc.warn)
		}
	}
	var g *Guard
	if got := g.Name(pipe); got != pipe {
		t.Errorf("nil Guard: Name(%q) = %q", pipe, got)
	}
}
