package driver

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	jprofile "github.com/jitpprof/pprof/profile"
)

// recordingIndexer is a jprofile.Indexer that records what it was asked
// to index.
type recordingIndexer struct {
	mu      sync.Mutex
	indexed []string
}

func (r *recordingIndexer) IndexFrames(path string) (jprofile.FrameSource, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.indexed = append(r.indexed, path)
	return nil, false, errors.New("not indexed here")
}

// TestWarmer: while a profile is parsed, the JIT stage loads the objects
// of its directories once, and has the object tool index the LLVM dumps
// that hold one of the profile's JIT addresses: not the others, and
// nothing when the JIT objects are not symbolized in process.
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
			index := &recordingIndexer{}
			cache := jprofile.NewCache(jprofile.CacheOptions{Index: index})
			j := newJIT(flags, &testUI{}, []string{dir}, func(string) string { return "" }, cache)
			flags.Parse(func() {})
			dirs := j.find.dirs("")
			j.warmer(dirs)(addrs)
			j.close()
			cache.Close()
			if !slices.Equal(index.indexed, tc.want) {
				t.Errorf("indexed %q, want %q", index.indexed, tc.want)
			}
			// The stage uses the set loaded ahead.
			if got, ahead := j.objects(dirs, nil, "profile"), j.load(dirs, nil); got != ahead || got.Len() != 3 {
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
	cache := jprofile.NewCache(jprofile.CacheOptions{})
	defer cache.Close()
	j := newJIT(flags, ui, []string{dir}, func(string) string { return "" }, cache)
	flags.Parse(func() {})
	dirs := j.find.dirs("")
	j.preload(dirs)
	j.preload(nil) // nothing to load
	j.warming.Wait()
	if len(ui.msgs) != 0 {
		t.Errorf("the preload said %q", ui.msgs)
	}
	if n := cache.Reads(); n != 3 {
		t.Fatalf("%d objects read ahead, want the 3 of the directory", n)
	}
	set := j.objects(dirs, nil, "profile")
	j.objects(dirs, nil, "profile")
	if n := cache.Reads(); n != 3 {
		t.Errorf("%d objects read, want each of the 3 once", n)
	}
	if set.Len() != 2 {
		t.Errorf("the stage's set has %d objects, want the 2 intact dumps", set.Len())
	}
	if got := ui.mentioning("broken"); len(got) != 1 {
		t.Errorf("the broken object is mentioned %d times, want once: %q", len(got), ui.msgs)
	}
	j.close()
}
