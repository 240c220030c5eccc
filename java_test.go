package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestJavaPerfMap runs pprof on a real gperftools profile of an OpenJDK
// 17 program and the perf map the JVM wrote at exit, beside the profile,
// and checks the CPU time of each Java method against a reference
// computed from the raw profile and the map (see referenceFlat), on
// the system names of pprof's symbolized profile (-proto): upstream's
// demangler shortens the display name "int App.hot(int[])" to
// "int App.hot".
func TestJavaPerfMap(t *testing.T) {
	runs := map[string]string{"golden": filepath.Join(testenv.RepoRoot(t), "testdata", "java", "golden")}
	if dir := os.Getenv("JITPPROF_FRESH_JAVA"); dir != "" {
		runs["fresh"] = dir
	} else if testenv.InCI() {
		t.Fatal("JITPPROF_FRESH_JAVA is not set: under CI, ./test.sh must regenerate the Java fixture")
	}
	for name, dir := range runs {
		t.Run(name, func(t *testing.T) {
			maps, _ := filepath.Glob(filepath.Join(dir, "perf-*.map"))
			if len(maps) != 1 {
				t.Fatalf("want one perf map in %s, have %q", dir, maps)
			}
			lines := readPerfMapLines(t, maps[0])
			prof := filepath.Join(dir, "cpu.prof")
			want := referenceFlat(t, prof, func(addr uint64) string {
				name := ""
				for _, l := range lines {
					if addr >= l.start && addr-l.start < l.size {
						name = l.name
					}
				}
				return name
			})
			out := filepath.Join(t.TempDir(), "out.pb.gz")
			runPProf(t, t.TempDir(), nil, "-proto", "-output", out, prof)
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := profile.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, s := range p.Sample {
				if ln := s.Location[0].Line; len(ln) > 0 {
					got[ln[len(ln)-1].Function.SystemName] += s.Value[1] / 1e6
				}
			}
			for _, m := range []string{"int App.hot(int[])", "long App.sortWork(int)"} {
				if got[m] == 0 || got[m] != want[m] {
					t.Errorf("%s: %dms, reference %dms", m, got[m], want[m])
				}
			}
			if got["int App.hot(int[])"]+got["long App.sortWork(int)"] < 100 {
				t.Errorf("too little time in App's methods: %v", got)
			}
		})
	}
}
