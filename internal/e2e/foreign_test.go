package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestForeignBinariesSymbolized runs pprof -traces on a profile whose
// mappings name a 32-bit ELF, a PE and a Mach-O executable (the fixtures
// of internal/objtool/testdata/foreign) loaded where a process would
// load them: each sample gets the frames llvm-symbolizer --inlining
// gives, inline frames included, and nothing is said about falling back.
func TestForeignBinariesSymbolized(t *testing.T) {
	dir := t.TempDir()
	bin := func(name string) string {
		p, err := filepath.Abs(filepath.Join(testenv.RepoRoot(t), "internal/objtool/testdata/foreign", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	maps := []*profile.Mapping{
		{ID: 1, Start: 0x8049000, Limit: 0x804a000, Offset: 0x1000, File: bin("elf32")},
		// PE: ImageBase 0x140000000, loaded elsewhere.
		{ID: 2, Start: 0x7ff7a0000000, Limit: 0x7ff7a0010000, File: bin("pe.exe")},
		// Mach-O: __TEXT at 0x100000000, slid.
		{ID: 3, Start: 0x10a000000, Limit: 0x10a004000, File: bin("macho-exe")},
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1,
		Mapping:    maps,
	}
	for i, a := range []struct {
		m    *profile.Mapping
		addr uint64
	}{
		{maps[0], 0x8049090},                                 // mix < mix2 < work
		{maps[1], 0x7ff7a0000000 + 0x1020},                   // mix < mix2 < ___crt_xt_end__ (at work's address)
		{maps[2], 0x10a000000 + (0x100000430 - 0x100000000)}, // work (no DWARF)
	} {
		loc := &profile.Location{ID: uint64(i + 1), Mapping: a.m, Address: a.addr}
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{int64(10 * (i + 1))}})
	}
	prof := filepath.Join(dir, "foreign.pb.gz")
	out, err := os.Create(prof)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	r := run(pprofCmd(t, dir, nil, "-traces", prof))
	if r.err != nil {
		t.Fatalf("pprof -traces: %v\n%s", r.err, r.stderr)
	}
	// -traces prints each sample's frames, leaf first, one a line, after
	// its value.
	var traces [][]string
	for _, block := range strings.Split(string(r.stdout), "-----------+-------------------------------------------------------") {
		var frames []string
		for _, line := range strings.Split(block, "\n") {
			f := strings.Fields(strings.TrimSuffix(line, " (inline)"))
			if len(f) == 0 || strings.Contains(line, ":") {
				continue
			}
			frames = append(frames, f[len(f)-1])
		}
		if len(frames) > 0 {
			traces = append(traces, frames)
		}
	}
	got := make([]string, 0, len(traces))
	for _, tr := range traces {
		got = append(got, strings.Join(tr, " < "))
	}
	want := []string{"mix < mix2 < work", "mix < mix2 < ___crt_xt_end__", "work"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("traces:\n%s\nwant:\n%s\n\noutput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), r.stdout)
	}
	if strings.Contains(string(r.stderr), "binutils") {
		t.Errorf("pprof warned about binutils:\n%s", r.stderr)
	}
}
