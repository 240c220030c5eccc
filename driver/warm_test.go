package driver

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
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
