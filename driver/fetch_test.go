package driver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestIsPerfFile: perf.data files of either byte order, and the
// directories of perf record --threads, are perf recordings; other
// files and directories are not.
func TestIsPerfFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		testenv.WriteFile(t, p, []byte(content))
		return p
	}
	threads := filepath.Join(dir, "threads.data")
	write("threads.data/data", "PERFILE2...")
	for _, n := range []string{"data.10", "data.2", "data.0", "data.x", "data.-1", "other"} {
		write("threads.data/"+n, "")
	}
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	for _, tc := range []struct {
		path string
		want bool
	}{
		{write("le.data", "PERFILE2 and more"), true},
		{write("be.data", "2ELIFREP and more"), true},
		{threads, true},
		{write("short", "PERF"), false},
		{write("cpu.pprof", "\x1f\x8b\x08\x00"), false},
		{filepath.Join(dir, "empty"), false},
		{filepath.Join(dir, "missing"), false},
	} {
		if got := isPerfFile(tc.path); got != tc.want {
			t.Errorf("isPerfFile(%s) = %v, want %v", filepath.Base(tc.path), got, tc.want)
		}
	}
	files, notes, err := threadDataFiles(threads)
	var got []string
	for _, f := range files {
		got = append(got, f.name)
	}
	want := []string{"data.0", "data.2", "data.10"}
	for i := range want {
		want[i] = filepath.Join(threads, want[i])
	}
	if err != nil || !slices.Equal(got, want) || len(notes) > 0 {
		t.Errorf("threadDataFiles = %q, %q, %v; want %q", got, notes, err, want)
	}
}
