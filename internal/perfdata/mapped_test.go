package perfdata

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/mapfile"
)

// TestMappedRecording: a recording read in place, mapped, has the records
// read from its bytes; cut while it is read (another program truncates
// it), its records end with a FormatError that says so, not a crash.
func TestMappedRecording(t *testing.T) {
	data, err := os.ReadFile("../../testdata/perf/golden/single.data")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(f *File) (n int, err error) {
		err = f.Records(func(*Record) bool { n++; return true })
		return n, err
	}
	want, err := count(mustOpen(t, data))
	if err != nil || want < 100 {
		t.Fatalf("read from memory: %d records, %v", want, err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	m, err := mapfile.Map(fd, int64(len(data)))
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	f, err := Open(m, int64(len(data)), path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := count(f); got != want || err != nil {
		t.Fatalf("mapped: %d records, %v; want %d", got, err, want)
	}
	if err := os.Truncate(path, int64(len(data)/3&^(os.Getpagesize()-1))); err != nil { // past a page that ends there, reads fault
		t.Fatal(err)
	}
	got, err := count(f)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != path || !strings.Contains(err.Error(), "shrank") || got >= want {
		t.Errorf("mapped, cut to a third: %d records, %v", got, err)
	}
}

func mustOpen(t *testing.T, data []byte) *File {
	t.Helper()
	f, err := open(t, data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
