package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/perftest"
)

// TestNotOwnedRefused: a perf map or jitdump owned by another user than
// the one pprof runs as, and not by root, is refused as perf refuses it,
// with an error naming the file, its owner and the flag that uses it; a
// Cache told SetAnyOwner reads it. (Making a file another user's takes
// root.)
func TestNotOwnedRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dir := t.TempDir()
	files := map[string][]byte{"perf-7.map": perftest.GoodMap(), "jit-8.dump": perftest.JITDump(8, 1)}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 4242, 4242); err != nil {
			t.Skip(err)
		}
	}
	set, errs := NewCache(CacheOptions{}).Load([]string{dir}, nil)
	if set.Len() != 0 || len(errs) != 2 {
		t.Fatalf("%d objects, errors %v; want none and 2", set.Len(), errs)
	}
	for _, err := range errs {
		var no *NotOwnedError
		if !errors.As(err, &no) || no.Owner != 4242 || no.User != 0 {
			t.Errorf("error %v, want a *NotOwnedError of user 4242", err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, dir) || !strings.HasSuffix(msg, ": owned by user 4242, not by you (user 0) or root: not used, as perf does not use it (-jit_any_owner uses it)") {
			t.Errorf("message %q", msg)
		}
	}
	c := NewCache(CacheOptions{})
	c.SetAnyOwner(true)
	if set, errs := c.Load([]string{dir}, nil); set.Len() != 2 || len(errs) != 0 {
		t.Errorf("with SetAnyOwner: %d objects, errors %v; want 2 and none", set.Len(), errs)
	}
	// Root's files, and the user's own, are used.
	for name := range files {
		os.Chown(filepath.Join(dir, name), 0, 0)
	}
	if set, errs := NewCache(CacheOptions{}).Load([]string{dir}, nil); set.Len() != 2 || len(errs) != 0 {
		t.Errorf("root's: %d objects, errors %v; want 2 and none", set.Len(), errs)
	}
}

// TestPerfMapReadToItsSizeAtOpen: a perf map is read as far as it was
// long when opened, however a runtime appends to it meanwhile; one that
// is mostly the holes of a sparse file is refused, not read for hours.
func TestPerfMapReadToItsSizeAtOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "perf-9.map")
	if err := os.WriteFile(p, perftest.GoodMap(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := openSource(p, loadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if size != int64(len(perftest.GoodMap())) {
		t.Errorf("size %d", size)
	}
	sparse := filepath.Join(dir, "perf-10.map")
	if err := os.WriteFile(sparse, perftest.GoodMap(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 2<<40); err != nil {
		t.Skip(err)
	}
	_, err = loadPerfMap(sparse, loadOptions{})
	if err == nil || !strings.Contains(err.Error(), "bytes are holes of a sparse file: not read") {
		t.Errorf("sparse perf map: %v", err)
	}
}
