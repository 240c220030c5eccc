package driver

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	jprofile "github.com/jitpprof/pprof/profile"
)

// TestWarmer: while a profile is parsed, the JIT stage loads the objects
// of its directories once, and has the object tool start on the LLVM
// dumps that hold one of the profile's JIT addresses: not on the others,
// not on a perf map, and on nothing when the JIT objects are not
// symbolized in process.
func TestWarmer(t *testing.T) {
	dir := copyObjects(t) // two LLVM dumps
	// A perf map whose one entry is far from the dumps' code.
	if err := os.WriteFile(filepath.Join(dir, "perf-4242.map"), []byte("100000 40 jitted_fn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, errs := jprofile.Load([]string{dir})
	if len(errs) != 0 || set.Len() != 3 {
		t.Fatalf("Load: %d objects, errors %v", set.Len(), errs)
	}
	var dump *jprofile.Object
	for _, o := range set.Objects {
		if o.Kind == jprofile.LLVMDump && dump == nil {
			dump = o
		}
	}
	addrs := []uint64{
		dump.Sections[0].Start + 1, // the first dump
		0x100010,                   // the perf map
		0x42,                       // nothing
	}

	for _, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{name: "in process", want: []string{dump.Path}},
		{name: "binutils", flags: []string{"-jit_symbolizer=binutils"}},
		{name: "no symbolization", flags: []string{"-symbolize=none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := newFlagRecorder(NewFlagSet("pprof", append(tc.flags, "profile"), flag.ContinueOnError))
			flags.String(flagSymbolize, "", "")
			j := newJIT(flags, &testUI{}, []string{dir}, func(string) string { return "" }, nil)
			var mu sync.Mutex
			var warmed []string
			j.warm = func(path string) {
				mu.Lock()
				defer mu.Unlock()
				warmed = append(warmed, path)
			}
			flags.Parse(func() {})
			dirs := j.dirs("")
			j.warmer(dirs)(addrs)
			j.close()
			if !slices.Equal(warmed, tc.want) {
				t.Errorf("warmed %q, want %q", warmed, tc.want)
			}
			// The stage uses the set loaded ahead.
			if got, ahead := j.objects(dirs), j.load(dirs).set; got != ahead || got.Len() != 3 {
				t.Errorf("the stage's set (%d objects) is not the one loaded ahead", got.Len())
			}
		})
	}
}

// TestPreload: the objects of the JIT directories are loaded before the
// profile is parsed, once, and silently: what was wrong with them is
// said when the stage uses them, once, as without the preload.
func TestPreload(t *testing.T) {
	dir := copyObjects(t) // two LLVM dumps
	if err := os.WriteFile(filepath.Join(dir, "broken.meta"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.elf"), []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError))
	flags.String(flagSymbolize, "", "")
	ui := &testUI{}
	j := newJIT(flags, ui, []string{dir}, func(string) string { return "" }, nil)
	flags.Parse(func() {})
	dirs := j.dirs("")
	j.preload(dirs)
	j.preload(nil) // nothing to load
	j.warming.Wait()
	if len(ui.msgs) != 0 {
		t.Errorf("the preload said %q", ui.msgs)
	}
	if _, computed := j.loads.Get(strings.Join(dedupDirs(dirs), "\x00"), func() loadedSet {
		return loadedSet{}
	}); computed {
		t.Fatal("the directories were not loaded ahead")
	}
	set := j.objects(dirs)
	j.objects(dirs)
	if set.Len() != 2 {
		t.Errorf("the stage's set has %d objects, want the 2 intact dumps", set.Len())
	}
	if got := ui.mentioning("broken"); len(got) != 1 {
		t.Errorf("the broken object is mentioned %d times, want once: %q", len(got), ui.msgs)
	}
	j.close()
}
