package jitsnap

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/profile"
)

func TestMeta(t *testing.T) {
	secs := []elfrel.Section{
		{Name: ".text", Addr: 140675611394048, Size: 1047634},
		{Name: ".debug_info", Size: 99}, // not loaded: left out
		{Name: "q\"b\\s\x01\x1fé", Addr: 1, Size: 0},
	}
	got := string(Meta(secs))
	want := "{\"sections\":[\n" +
		"{\"name\":\".text\",\"start\":140675611394048,\"size\":1047634},\n" +
		"{\"name\":\"q\\\"b\\\\s\\u0001\\u001fé\",\"start\":1,\"size\":0}\n" +
		"]}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	parsed, err := profile.ParseMeta(strings.NewReader(got))
	if err != nil {
		t.Fatalf("profile.ParseMeta: %v", err)
	}
	wantParsed := []profile.Section{{Name: ".text", Start: 140675611394048, Size: 1047634}, {Name: "q\"b\\s\x01\x1fé", Start: 1}}
	if !slices.Equal(parsed, wantParsed) {
		t.Errorf("profile.ParseMeta: got %+v, want %+v", parsed, wantParsed)
	}
	if got, want := string(Meta(nil)), "{\"sections\":[\n]}\n"; got != want {
		t.Errorf("no sections: got %q, want %q", got, want)
	}
}

// collectOne returns the test object at addr as Collect returns it.
func collectOne(t *testing.T, addr uint64) Object {
	t.Helper()
	im, d := listImage(testObject(addr))
	objs, _, err := Options{}.Collect(im, im.mappings(), d)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Collect: %d objects, %v", len(objs), err)
	}
	return objs[0]
}

func TestWriteObject(t *testing.T) {
	dir := t.TempDir()
	obj := collectOne(t, 0x7f0000001000)
	elfPath := filepath.Join(dir, obj.Name+ElfExt)
	metaPath := filepath.Join(dir, obj.Name+MetaExt)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	age := func() {
		for _, p := range []string{elfPath, metaPath} {
			if err := os.Chtimes(p, old, old); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	touched := func(p string) bool {
		fi, err := os.Stat(p)
		return err != nil || !fi.ModTime().Equal(old)
	}
	steps := []struct {
		name        string
		before      func()
		wantWritten bool
		wantTouched []string
	}{
		{name: "new", wantWritten: true},
		{name: "again", wantTouched: nil},
		{name: "meta missing", before: func() { os.Remove(metaPath) }, wantWritten: true, wantTouched: []string{metaPath}},
		{name: "meta differs", before: func() { os.WriteFile(metaPath, []byte("{}"), 0o644) }, wantWritten: true, wantTouched: []string{metaPath}},
		{name: "elf differs", before: func() {
			b, _ := os.ReadFile(elfPath)
			b[len(b)-1] ^= 1
			os.WriteFile(elfPath, b, 0o644)
		}, wantWritten: true, wantTouched: []string{elfPath}},
		{name: "elf truncated", before: func() { os.Truncate(elfPath, 10) }, wantWritten: true, wantTouched: []string{elfPath}},
		{name: "FIFOs in their place", before: func() {
			// Opening one to compare would block forever: they must be
			// replaced without being opened.
			for _, p := range []string{elfPath, metaPath} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, wantWritten: true, wantTouched: []string{elfPath, metaPath}},
	}
	for i, s := range steps {
		if i > 0 {
			age()
		}
		if s.before != nil {
			s.before()
			if i > 0 {
				age()
			}
		}
		written, err := WriteObject(dir, obj)
		if err != nil || written != s.wantWritten {
			t.Fatalf("%s: got written %v, %v; want %v", s.name, written, err, s.wantWritten)
		}
		if i == 0 {
			continue
		}
		for _, p := range []string{elfPath, metaPath} {
			if got, want := touched(p), slices.Contains(s.wantTouched, p); got != want {
				t.Errorf("%s: %s touched %v, want %v", s.name, filepath.Base(p), got, want)
			}
		}
	}
	if b, _ := os.ReadFile(elfPath); string(b) != string(imageBytes(t, obj)) {
		t.Errorf("%s does not hold the object", elfPath)
	}
	if b, _ := os.ReadFile(metaPath); string(b) != string(Meta(obj.Sections)) {
		t.Errorf("%s does not hold the meta", metaPath)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmps) != 0 {
		t.Errorf("temporary files left behind: %v", tmps)
	}
	if fi, err := os.Stat(elfPath); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("got mode %v, %v; want 0644", fi.Mode(), err)
	}
}

// TestWrittenObjectsLoad checks that the mapping stage reads what
// WriteObject writes.
func TestWrittenObjectsLoad(t *testing.T) {
	dir := t.TempDir()
	objs := []Object{collectOne(t, 0x7f0000001000), collectOne(t, 0x7f0000009000)}
	for _, o := range objs {
		if _, err := WriteObject(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	set, errs := profile.Load([]string{dir})
	if len(errs) != 0 {
		t.Fatalf("profile.Load: %v", errs)
	}
	for _, o := range objs {
		found := false
		for _, po := range set.Objects {
			if filepath.Base(po.Path) == o.Name+ElfExt && len(po.Sections) == 1 && po.Sections[0].Start == o.Sections[0].Addr {
				found = true
			}
		}
		if !found {
			t.Errorf("profile.Load did not load %s with its .text at %#x", o.Name, o.Sections[0].Addr)
		}
	}
}

func TestWriteObjectErrors(t *testing.T) {
	dir := t.TempDir()
	obj := collectOne(t, 0x7f0000001000)
	for _, name := range []string{"", "../x", "a/b", ".hidden"} {
		o := obj
		o.Name = name
		if _, err := WriteObject(dir, o); err == nil {
			t.Errorf("name %q: got no error, want one", name)
		}
	}
	if _, err := WriteObject(filepath.Join(dir, "missing"), obj); err == nil {
		t.Errorf("missing directory: got no error, want one")
	}
}

func TestSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	a, b := collectOne(t, 0x7f0000001000), collectOne(t, 0x7f0000009000)
	res := &Result{PID: 42, Dir: dir}
	if err := save(res, []Object{a, b, a}); err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 2 || len(res.Unchanged) != 0 || res.Written[0].Data != nil {
		t.Errorf("got %d written, %d unchanged, want 2 written without data", len(res.Written), len(res.Unchanged))
	}
	res2 := &Result{PID: 42, Dir: dir}
	if err := save(res2, []Object{b, a}); err != nil {
		t.Fatal(err)
	}
	if len(res2.Written) != 0 || len(res2.Unchanged) != 2 {
		t.Errorf("second save: got %d written, %d unchanged, want 0, 2", len(res2.Written), len(res2.Unchanged))
	}
	// A file where the directory should be.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	err := save(&Result{PID: 42, Dir: filepath.Join(file, "sub")}, []Object{a})
	if !errors.Is(err, ErrWrite) {
		t.Errorf("got %v, want an ErrWrite", err)
	}
}

// TestWriteObjectChanged: an object whose bytes in the target change
// after Collect checked them is not saved under the name of the old
// bytes.
func TestWriteObjectChanged(t *testing.T) {
	im, d := listImage(testObject(0x7f0000001000))
	objs, _, err := Options{}.Collect(im, im.mappings(), d)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Collect: %d objects, %v", len(objs), err)
	}
	obj := objs[0]
	for _, r := range im.regions {
		if r.addr <= obj.Addr && obj.Addr < r.addr+uint64(len(r.data)) {
			r.data[obj.Addr-r.addr+obj.Size-1] ^= 0xff
		}
	}
	dir := t.TempDir()
	if _, err := WriteObject(dir, obj); !errors.Is(err, errChanged) {
		t.Errorf("WriteObject of a changed object: %v, want %v", err, errChanged)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
		t.Errorf("left %v", names)
	}
}

// TestCollectMemoryBounded: checking, hashing and writing a large
// symfile allocates a few chunks, not the symfile's size.
func TestCollectMemoryBounded(t *testing.T) {
	const size = 64 << 20
	obj := buildELF(elf.ET_REL, "big.c", textAt(".text", 0x7f0000001000),
		elftest.Section{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: make([]byte, size)})
	im, d := listImage(obj)
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	objs, _, err := Options{}.Collect(im, im.mappings(), d)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Collect: %d objects, %v", len(objs), err)
	}
	if _, err := WriteObject(dir, objs[0]); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Errorf("Collect and WriteObject of a %d MiB symfile allocated %d MiB", size>>20, alloc>>20)
	}
	if fi, err := os.Stat(filepath.Join(dir, objs[0].Name+ElfExt)); err != nil || fi.Size() != int64(len(obj)) {
		t.Errorf("written object: %v, %v; want %d bytes", fi, err, len(obj))
	}
}
