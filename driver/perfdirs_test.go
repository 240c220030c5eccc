package driver

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDirs: the JIT files a perf.data recording names are linked into
// one temporary directory per run, however often asked, each under its
// own name (two containers' jit-1.dump); one gone is taken from beside
// the recording, or named once if not there either; "JIT objects: using"
// names the recording's files, not the directory.
func TestPerfDirs(t *testing.T) {
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
	j := newJIT(flags, ui, nil, func(string) string { return "" }, nil)
	flags.Parse(func() {})
	pids := []uint32{7, 8, 1234}
	first := j.perfDirs(files, pids, rec)
	again := j.perfDirs(files, pids, rec)
	defer j.close()
	// The recording's directory holds a JIT source: it is a JIT
	// directory, and perf-7.map there is used from it.
	if len(first) != 2 || first[0] != filepath.Dir(rec) || !slices.Equal(first, again) {
		t.Fatalf("perfDirs = %q, then %q; want the recording's directory and one temporary directory", first, again)
	}
	got := links(first[1])
	want := []string{"perf-1.2.map -> " + b, "perf-1.map -> " + a}
	if !slices.Equal(got, want) {
		t.Errorf("linked %q, want %q", got, want)
	}
	if gone := ui.mentioning("is gone"); len(gone) != 1 || !strings.Contains(gone[0], "/gone/perf-8.map") {
		t.Errorf("notes about gone files: %q; want one, naming /gone/perf-8.map", gone)
	}
	if n := j.objects(first).Len(); n != 3 {
		t.Errorf("%d JIT sources, want 3", n)
	}
	using := ui.mentioning("JIT objects: using")
	if len(using) != 1 || strings.Contains(using[0], first[1]) || !strings.Contains(using[0], "the JIT files perf.data names ("+a) {
		t.Errorf("%q: want the recording's files named, not %s", using, first[1])
	}
}

// TestPerfDirsOtherProcesses: of the directory pprof finds a recording's
// JIT files in (its own), holding files of its processes, the files
// named after processes the recording has no records of are left out,
// and named once; the others are linked with the recording's own files.
// A directory with none of its processes' files, and one the user
// gives, are used whole.
func TestPerfDirsOtherProcesses(t *testing.T) {
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
	j := newJIT(flags, ui, nil, func(string) string { return "" }, nil)
	flags.Parse(func() {})
	defer j.close()
	dirs := j.perfDirs(files, []uint32{5, 42}, rec)
	if len(dirs) != 1 || dirs[0] == tmp {
		t.Fatalf("perfDirs = %q, want one temporary directory", dirs)
	}
	got := links(dirs[0])
	// The recording's perf-1.map is not where it was recorded: the copy
	// beside it is linked, once.
	want := []string{"perf-1.map -> " + named, "perf-5.map -> " + mine}
	if !slices.Equal(got, want) {
		t.Errorf("linked %q, want %q", got, want)
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
	j2 := newJIT(newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError)), &testUI{}, nil, func(string) string { return "" }, nil)
	defer j2.close()
	if dirs := j2.perfDirs(nil, []uint32{42}, filepath.Join(copied, "perf.data")); len(dirs) != 1 || dirs[0] != copied {
		t.Errorf("perfDirs = %q, want %s whole", dirs, copied)
	}

	// Given with -jit_dir: all of it.
	flags = newFlagRecorder(NewFlagSet("pprof", []string{"profile"}, flag.ContinueOnError))
	j = newJIT(flags, &testUI{}, nil, func(string) string { return "" }, nil)
	flags.Parse(func() {})
	defer j.close()
	*j.dirFlag = append(*j.dirFlag, &tmp)
	if dirs := j.perfDirs(files, []uint32{5, 42}, rec); len(dirs) != 1 || dirs[0] != tmp {
		t.Errorf("with -jit_dir=%s: perfDirs = %q, want that directory", tmp, dirs)
	}
}

// links lists the symbolic links in dir, "NAME -> TARGET", by name.
func links(dir string) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}
