package regfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	f, err := Open(file)
	if err != nil {
		t.Fatalf("regular file: %v", err)
	}
	f.Close()
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file (p---------)"},
		{link, "not a regular file (p---------)"},
		{dir, "not a regular file (d---------)"},
		{"/dev/zero", "not a regular file (Dc---------)"},
	} {
		// A blocking open of the FIFO would never return: the test
		// would time out rather than fail.
		f, err := Open(tc.path)
		var nr *NotRegularError
		if err == nil || !errors.As(err, &nr) || err.Error() != tc.want {
			t.Errorf("Open(%s) = %v, %v; want %q", tc.path, f, err, tc.want)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) || err.Error() != "no such file or directory" {
		t.Errorf("missing file: %v, want the bare ENOENT", err)
	}
}

func TestAllocated(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("end"), 1<<30-3); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	n, ok := Allocated(fi)
	if !ok || n <= 0 || n > 1<<20 {
		t.Errorf("a 1 GiB file with 3 bytes written occupies %d bytes (%v), want a page or a few", n, ok)
	}
}

func TestHoles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const mib = 1 << 20
	// Data in [0, 1 MiB) and [3 MiB, 4 MiB); a hole between.
	data := make([]byte, mib)
	for i := range data {
		data[i] = byte(i) | 1
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 3*mib); err != nil {
		t.Fatal(err)
	}
	if n, ok := Holes(f, 0, mib); !ok || n != 0 {
		t.Errorf("Holes of the first MiB = %d, %v; want 0", n, ok)
	}
	n, ok := Holes(f, 0, 4*mib)
	if !ok {
		t.Fatal("Holes: not ok")
	}
	if n == 0 {
		t.Skip("the file system makes no holes")
	}
	if n != 2*mib {
		t.Errorf("Holes of the whole file = %d, want %d", n, 2*mib)
	}
	if n, _ := Holes(f, mib/2, 2*mib); n != 3*mib/2 {
		t.Errorf("Holes of [0.5, 2.5) MiB = %d, want %d", n, 3*mib/2)
	}
}

// TestIDOf: a file has one ID by every name (a symbolic link, a hard
// link, a path through "..") and another file another.
func TestIDOf(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, name := range []string{a, b} {
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, filepath.Join(dir, "sym")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	id := func(name string) ID {
		t.Helper()
		f, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id, err := IDOf(f)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id(a) == id(b) {
		t.Error("two files have the same ID")
	}
	for _, name := range []string{"sym", "hard", "d/../a"} {
		if id(dir+"/"+name) != id(a) { // not cleaned
			t.Errorf("%s and the file it names have different IDs", name)
		}
	}
}

func TestOpenLimited(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit   int64
		want    string
		wantErr string
	}{
		{limit: 10, want: "0123456789"},
		{limit: 11, want: "0123456789"},
		{limit: 9, want: "012345678", wantErr: "read " + file + ": more than 9 bytes, the most read of such a file"},
	} {
		for _, read := range []struct {
			name string
			fn   func(*Limited) ([]byte, error)
		}{
			{"io.ReadAll", func(l *Limited) ([]byte, error) { return io.ReadAll(l) }},
			{"ReadAll", (*Limited).ReadAll},
		} {
			l, err := OpenLimited(file, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			got, err := read.fn(l)
			l.Close()
			var tl *TooLargeError
			if string(got) != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && (err.Error() != tc.wantErr || !errors.As(err, &tl))) {
				t.Errorf("limit %d, %s: got %q, %v; want %q, %q", tc.limit, read.name, got, err, tc.want, tc.wantErr)
			}
		}
	}
	// A file of /proc has no size: ReadAll grows its buffer as it reads.
	if l, err := OpenLimited("/proc/self/maps", 1<<20); err == nil {
		want, _ := io.ReadAll(l)
		l.Close()
		l, _ = OpenLimited("/proc/self/maps", 1<<20)
		got, err := l.ReadAll()
		l.Close()
		if err != nil || len(got) < 100 || len(got) < len(want)/2 {
			t.Errorf("ReadAll(/proc/self/maps): %d bytes, %v; io.ReadAll read %d", len(got), err, len(want))
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/urandom"} {
		var nr *NotRegularError
		if _, err := OpenLimited(path, 1<<20); !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), "open "+path+": not a regular file") {
			t.Errorf("OpenLimited(%s): %v, want a *NotRegularError naming it", path, err)
		}
	}
}
