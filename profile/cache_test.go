package profile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCacheReadsOnce: a jitdump (Node.js 20's, testdata/node) is read
// once per Cache, however many consumers ask for it: the mapping stage
// through two directory lists and the perf.data file list, the object
// tool's code views by path, the symbolizer, the unwinder and the replay.
// All get the same Object.
func TestCacheReadsOnce(t *testing.T) {
	dir := t.TempDir()
	dumps, _ := filepath.Glob("../testdata/node/golden/prof/jit-*.dump")
	if len(dumps) != 1 {
		t.Fatalf("%d jitdumps in testdata/node/golden/prof, want 1", len(dumps))
	}
	data, err := os.ReadFile(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.Base(dumps[0]))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCache(CacheOptions{})
	defer c.Close()

	set, _ := c.Load([]string{dir}, nil)
	if set.Len() != 1 {
		t.Fatalf("%d objects, want the jitdump", set.Len())
	}
	obj := set.Objects[0]
	again, _ := c.Load([]string{dir, dir + "/."}, nil) // another list, same file
	byFile, _ := c.Load(nil, []string{path})           // as a recording names it
	byPath, err := c.Object(path)                      // as the code views open it
	if err != nil {
		t.Fatal(err)
	}
	if again.Len() != 1 {
		t.Errorf("the directory given twice gave %d objects, want 1", again.Len())
	}
	for _, got := range []*Object{again.Objects[0], byFile.Objects[0], byPath} {
		if got != obj {
			t.Errorf("got another Object for %s", path)
		}
	}
	code, _, _, ok := obj.Code()
	if !ok || len(code) == 0 {
		t.Fatal("the jitdump holds no code")
	}
	src, err := obj.FrameSource()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range code {
		if len(src.Frames(c.Addr)) != 1 {
			t.Errorf("%s at %#x: no frame", c.Name, c.Addr)
		}
		obj.CallFrameInfo(c.Addr)
		set.CodeAt(0, c.Addr, 1)
	}
	set.Replaced()
	if n := c.Reads(); n != 1 {
		t.Errorf("the jitdump was read %d times, want once", n)
	}
}
