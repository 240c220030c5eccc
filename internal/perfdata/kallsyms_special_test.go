package perfdata

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jitpprof/pprof/internal/regfile"
)

// TestReadKallsymsSpecialFiles: perf's build-ID cache is a directory
// anyone may write to; a FIFO as its copy of a kernel's symbols would
// block an open forever, and /dev/urandom would be read without end.
// Both are refused at once; a regular file is read.
func TestReadKallsymsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kallsyms")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/urandom", dir} {
		var nr *regfile.NotRegularError
		if _, err := readKallsyms(path); !errors.As(err, &nr) {
			t.Errorf("readKallsyms(%s): %v, want a *regfile.NotRegularError", path, err)
		}
	}
	file := filepath.Join(dir, "regular")
	if err := os.WriteFile(file, []byte("ffffffff81000000 T _stext\nffffffff81000100 t helper\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := readKallsyms(file)
	if err != nil || k.lookup(0xffffffff81000104) != "helper" {
		t.Errorf("readKallsyms(regular file): %v, lookup %q, want helper", err, k.lookup(0xffffffff81000104))
	}
}
