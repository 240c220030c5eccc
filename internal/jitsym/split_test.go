package jitsym

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestDWOReadOnce: a .dwo file that several skeleton units name, here by
// a different hard link each, is read and indexed once, not once per
// skeleton (a binary of many skeletons naming one large file would
// otherwise read it that many times); the skeletons whose units it has
// get them, each as from its own file, and the others their line tables
// alone, said naming the file.
func TestDWOReadOnce(t *testing.T) {
	clang := testenv.Tool(t, "clang-19", "clang-19")
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); testenv.Run(t, dir, args...) }
	for _, src := range []string{"inline.cc", "plain.c"} {
		abs, err := filepath.Abs(filepath.Join("testdata", "src", src))
		if err != nil {
			t.Fatal(err)
		}
		obj := strings.TrimSuffix(src, filepath.Ext(src)) + ".o"
		run(clang, "-O2", "-g", "-gsplit-dwarf", "-c", "-o", obj, abs)
	}
	// One relocatable object of both, two skeleton units: inline.dwo's
	// and plain.dwo's.
	run(clang, "-r", "-nostdlib", "-o", "both.o", "inline.o", "plain.o")
	lookup := func(open func(u SplitUnit) (*os.File, error)) (*Symbolizer, [][]Frame, []string) {
		t.Helper()
		f, err := elfrel.Open(filepath.Join(dir, "both.o"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var said []string
		s, err := NewWithDWO(f, nil, &DWO{Open: open, Warn: func(msg string) { said = append(said, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		var frames [][]Frame
		for _, sec := range f.Sections {
			if sec.Executable() {
				for a := sec.Addr; a < sec.Addr+sec.Size; a++ {
					frames = append(frames, s.AppendFrames(nil, a))
				}
			}
		}
		return s, frames, said
	}
	own, ownFrames, said := lookup(func(u SplitUnit) (*os.File, error) {
		return os.Open(filepath.Join(u.CompDir, u.DWOName))
	})
	if len(said) > 0 || len(own.split.files) != 2 {
		t.Fatalf("each skeleton with its own file: %d files indexed, %q said; want 2 and nothing", len(own.split.files), said)
	}

	// Every skeleton is given inline.dwo, by a name of its own.
	var opened []string
	s, frames, said := lookup(func(u SplitUnit) (*os.File, error) {
		name := filepath.Join(dir, fmt.Sprintf("link%d.dwo", len(opened)))
		if err := os.Link(filepath.Join(dir, "inline.dwo"), name); err != nil {
			return nil, err
		}
		opened = append(opened, name)
		return os.Open(name)
	})
	if len(opened) != 2 || len(s.split.files) != 1 {
		t.Fatalf("%d skeletons opened %d files; want 2 and 1", len(opened), len(s.split.files))
	}
	if len(said) != 1 || !strings.Contains(said[0], "link0.dwo: no unit with ID") {
		t.Errorf("said %q; want that link0.dwo has no unit of plain.c's skeleton", said)
	}
	var inline, same int
	for i := range frames {
		if len(frames[i]) > 1 {
			inline++
		}
		if reflect.DeepEqual(frames[i], ownFrames[i]) {
			same++
		}
	}
	// plain.c's addresses get their frames from its skeleton alone:
	// without plain.dwo's names of functions and inline frames.
	var plain, plainInline int
	for i := range ownFrames {
		if n := len(ownFrames[i]); n > 0 && strings.HasSuffix(ownFrames[i][n-1].File, "plain.c") {
			plain++
			if n > 1 {
				plainInline++
			}
		}
	}
	t.Logf("%d addresses, %d with inline frames, %d of plain.c (%d inline), %d the same", len(frames), inline, plain, plainInline, same)
	if inline == 0 || plainInline == 0 || same < len(frames)-plain {
		t.Errorf("%d of %d addresses with inline frames, %d as with each file its own; want some, and all but (some of) the %d of plain.c's",
			inline, len(frames), same, plain)
	}
}
