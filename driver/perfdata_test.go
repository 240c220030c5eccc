package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestThreadDataFilesBounded: the per-thread files of a perf record
// --threads directory are each read once however many links name them
// (4,000 links to one file took minutes, the file read 4,000 times),
// and at most maxThreadFiles of them (25,000 files ran out of
// descriptors), each said once.
func TestThreadDataFilesBounded(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "data"), []byte("PERFILE2"))
	one := filepath.Join(dir, "data.0")
	testenv.WriteFile(t, one, make([]byte, 4096))
	for i := 1; i < 4000; i++ {
		if err := os.Link(one, filepath.Join(dir, fmt.Sprintf("data.%d", i))); err != nil {
			t.Skip(err)
		}
	}
	os.Symlink("data", filepath.Join(dir, "data.5000")) // the header itself
	files, notes, err := threadDataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].name != one || files[0].size != 4096 {
		t.Errorf("files %+v, want data.0 alone", files)
	}
	want := "4000 per-thread files are another's links, read once: data.1 (data.0), data.2 (data.0), data.3 (data.0) and 3997 more"
	if len(notes) != 1 || !strings.HasSuffix(notes[0], want) {
		t.Errorf("notes %q, want one saying %q", notes, want)
	}

	if testing.Short() {
		t.Skip("the limit's 8,192 files (-short)")
	}
	many := t.TempDir()
	for i := range maxThreadFiles + 10 {
		testenv.WriteFile(t, filepath.Join(many, fmt.Sprintf("data.%d", i)), nil)
	}
	files, notes, err = threadDataFiles(many)
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("%d per-thread files (data.N), more than the 8192 perf record --threads writes at most (one a CPU): the first 8192 are read", maxThreadFiles+10)
	if len(files) != maxThreadFiles || len(notes) != 1 || !strings.HasSuffix(notes[0], want) {
		t.Errorf("%d files, notes %q; want %d and one note saying %q", len(files), notes, maxThreadFiles, want)
	}
}

// TestFilePoolOneOpen: a recording's per-thread files are opened one at a
// time as they are read.
func TestFilePoolOneOpen(t *testing.T) {
	dir := t.TempDir()
	var p filePool
	defer p.close()
	for i := range 3 {
		name := filepath.Join(dir, fmt.Sprint(i))
		testenv.WriteFile(t, name, []byte{byte(i)})
		b := make([]byte, 1)
		if _, err := p.readerAt(name).ReadAt(b, 0); err != nil || b[0] != byte(i) {
			t.Fatalf("file %d: read %v, %v", i, b, err)
		}
		if p.name != name {
			t.Errorf("file %d: open %q", i, p.name)
		}
	}
	if _, err := p.readerAt(filepath.Join(dir, "missing")).ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("a missing file read")
	}
}

// TestPerfErrorNamesFileOnce: upstream puts the source's name before
// every error; a perf.data error then does not repeat it.
func TestPerfErrorNamesFileOnce(t *testing.T) {
	_, err := perfdata.Open(strings.NewReader("PERFILE2"), 8, "x.data")
	if got, want := perfError("x.data", err).Error(), "too short to be a perf.data file (8 bytes; the header alone is 104)"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if got, want := perfError("dir", err).Error(), "x.data: too short"; !strings.HasPrefix(got, want) {
		t.Errorf("error of another file %q, want it to start %q", got, want)
	}
}
