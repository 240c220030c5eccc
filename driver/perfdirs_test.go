package driver

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
	jprofile "github.com/jitpprof/pprof/profile"
)

// TestPerfSources: the JIT files a perf.data recording names are read
// where they are, each its own object (two containers' perf-1.map); one
// gone is taken from beside the recording, or named once if not there
// either; "JIT objects: using" names the recording's files and the
// directory that held one, and each object is read once however often
// asked.
func TestPerfSources(t *testing.T) {
	tmp := t.TempDir()
	write := func(name string) string {
		t.Helper()
		p := filepath.Join(tmp, name)
		// A perf map of one function: a JIT source the stage loads.
		testenv.WriteFile(t, p, []byte("1000 10 fn\n"))
		return p
	}
	a := write("c1/tmp/perf-1.map")
	b := write("c2/tmp/perf-1.map")
	rec := filepath.Join(tmp, "rec", "perf.data")
	write("rec/perf-7.map") // copied with the recording
	files := []string{a, b, "/gone/perf-7.map", "/gone/perf-8.map"}

	flags := newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError))
	ui := &testUI{}
	cache := jprofile.NewCache(jprofile.CacheOptions{})
	defer cache.Close()
	j := newJIT(flags, ui, nil, func(string) string { return "" }, cache)
	flags.Parse(func() {})
	pids := []uint32{7, 8, 1234}
	dirs, extra := j.find.perfSources(files, pids, rec)
	defer j.close()
	// The recording's directory holds a JIT source: it is a JIT
	// directory, and perf-7.map there is used from it.
	if !slices.Equal(dirs, []string{filepath.Dir(rec)}) || !slices.Equal(extra, []string{a, b}) {
		t.Fatalf("perfSources = %q, %q; want the recording's directory, and %s, %s", dirs, extra, a, b)
	}
	if gone := ui.mentioning("is gone"); len(gone) != 1 || !strings.Contains(gone[0], "/gone/perf-8.map") {
		t.Errorf("notes about gone files: %q; want one, naming /gone/perf-8.map", gone)
	}
	set := j.objects(dirs, extra, rec)
	if n := set.Len(); n != 3 {
		t.Errorf("%d JIT sources, want 3", n)
	}
	if again := j.objects(dirs, extra, rec); again != set {
		t.Errorf("the same sources gave another set")
	}
	using := ui.mentioning("JIT objects: using")
	if want := "JIT objects: using 3 from " + filepath.Dir(rec) + ", the JIT files perf.data names (" + a + ", " + b + ")"; len(using) != 1 || using[0] != want {
		t.Errorf("%q: want %q", using, want)
	}
	if got := cache.Reads(); got != 3 {
		t.Errorf("%d files read, want each of the 3 once", got)
	}
}

// TestPerfSourcesOtherProcesses: of the directory pprof finds a
// recording's JIT files in (its own), holding files of its processes, the
// files named after processes the recording has no records of are left
// out, and named once; the others are read with the recording's own
// files.
// A directory with none of its processes' files, and one the user
// gives, are used whole.
func TestPerfSourcesOtherProcesses(t *testing.T) {
	cache := jprofile.NewCache(jprofile.CacheOptions{})
	defer cache.Close()
	tmp := t.TempDir()
	write := func(name string) string {
		t.Helper()
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte("1000 10 fn\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rec := filepath.Join(tmp, "perf.data")
	mine := write("perf-5.map")  // of a recorded process
	write("perf-99.map")         // of another run
	named := write("perf-1.map") // named by the recording (a container's)
	files := []string{"/proc/42/root/tmp/perf-1.map"}

	flags := newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError))
	ui := &testUI{}
	j := newJIT(flags, ui, nil, func(string) string { return "" }, cache)
	flags.Parse(func() {})
	defer j.close()
	dirs, extra := j.find.perfSources(files, []uint32{5, 42}, rec)
	// The recording's perf-1.map is not where it was recorded: the copy
	// beside it is read, once.
	if want := []string{named, mine}; len(dirs) != 0 || !slices.Equal(extra, want) {
		t.Fatalf("perfSources = %q, %q; want no directory, and %q", dirs, extra, want)
	}
	if left := ui.mentioning("did not record"); len(left) != 1 || !strings.Contains(left[0], "perf-99.map") || strings.Contains(left[0], "perf-5.map") {
		t.Errorf("notes about files left out: %q; want one, naming perf-99.map", left)
	}

	// A directory with no file of a recorded process: whole (a
	// container's perf-1.map copied out, its process gone).
	copied := t.TempDir()
	if err := os.WriteFile(filepath.Join(copied, "perf-1.map"), []byte("1000 10 fn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j2 := newJIT(newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError)), &testUI{}, nil, func(string) string { return "" }, cache)
	defer j2.close()
	if dirs, extra := j2.find.perfSources(nil, []uint32{42}, filepath.Join(copied, "perf.data")); len(dirs) != 1 || dirs[0] != copied || len(extra) != 0 {
		t.Errorf("perfSources = %q, %q; want %s whole", dirs, extra, copied)
	}

	// Given with -jit_dir: all of it.
	flags = newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError))
	j = newJIT(flags, &testUI{}, nil, func(string) string { return "" }, cache)
	flags.Parse(func() {})
	defer j.close()
	*j.jf.dir = append(*j.jf.dir, &tmp)
	// The recording's perf-1.map has a namesake there: it is not read
	// again.
	if dirs, extra := j.find.perfSources(files, []uint32{5, 42}, rec); len(dirs) != 1 || dirs[0] != tmp || len(extra) != 0 {
		t.Errorf("with -jit_dir=%s: perfSources = %q, %q; want that directory alone", tmp, dirs, extra)
	}
}
