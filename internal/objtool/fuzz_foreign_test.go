package objtool

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/jitpprof/pprof/internal/hostile"
)

// updateSeeds has TestFuzzSeeds write the seed corpora of FuzzMachO,
// FuzzPE and FuzzELF32 under testdata/fuzz from package hostile.
var updateSeeds = flag.Bool("update_fuzz_seeds", false, "write the seed corpora of FuzzMachO, FuzzPE and FuzzELF32")

// foreignFuzzers are the fuzzers of the containers the standard library
// reads, and the format of package hostile's seeds for each.
var foreignFuzzers = map[string]string{"FuzzMachO": "macho", "FuzzPE": "pe", "FuzzELF32": "elf32"}

// TestFuzzSeeds checks that the seed corpora under testdata/fuzz are
// package hostile's small files of each kind (see hostile.Seeds), as
// -update_fuzz_seeds writes them.
func TestFuzzSeeds(t *testing.T) {
	for fuzzer, format := range foreignFuzzers {
		for i, data := range hostile.Seeds(format) {
			path := filepath.Join("testdata", "fuzz", fuzzer, fmt.Sprintf("hostile-%d", i))
			want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint64(%d)\n", data, 4)
			if *updateSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != want {
				t.Errorf("%s is not hostile.Seeds(%q)[%d] (%v): run go test -run TestFuzzSeeds -update_fuzz_seeds", path, format, i, err)
			}
		}
	}
}

// FuzzMachO, FuzzPE and FuzzELF32 feed files of the containers the
// standard library reads to the object tool, seeded with the hostile
// kinds of each (testdata/fuzz) and the fixtures of testdata/foreign: no
// input may panic or hang, and what is allocated answering every
// question pprof asks stays within 64 MiB and 64 times the input.
func FuzzMachO(f *testing.F) {
	fuzzForeign(f, "macho-x86.o", "macho-arm64.o", "macho-fat.o", "macho-exe")
}

func FuzzPE(f *testing.F) { fuzzForeign(f, "pe.exe") }

func FuzzELF32(f *testing.F) {
	fuzzForeign(f, "elf32", "elf32-arm", "elf32-mips", "elf32-plt", "elf32-arm-plt")
}

func fuzzForeign(f *testing.F, fixtures ...string) {
	for _, name := range fixtures {
		if data, err := os.ReadFile(filepath.Join("testdata", "foreign", name)); err == nil {
			f.Add(data, uint64(4))
		}
	}
	rx := regexp.MustCompile(".")
	dir, debugDir := f.TempDir(), f.TempDir()
	path := filepath.Join(dir, "bin")
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		tool := New(Options{DebugDirs: []string{debugDir}, MaxDecompressed: 16 << 20})
		for _, m := range [][3]uint64{
			{0, ^uint64(0), 0},
			{hostile.TextAddr, hostile.TextAddr + 0x1000, 0},
			{hostile.MachOTextAddr, hostile.MachOTextAddr + 0x1000, 0},
			{hostile.PEImageBase + 0x1000, hostile.PEImageBase + 0x2000, 0},
		} {
			of, err := tool.Open(path, m[0], m[1], m[2], "")
			if err != nil {
				continue
			}
			a := m[0] + addr%max(m[1]-m[0], 1)
			of.SourceLine(a)
			syms, _ := of.Symbols(rx, 0)
			for i, s := range syms {
				if i == 4 {
					break
				}
				tool.Disasm(path, s.Start, min(s.End, s.Start+4096), i%2 == 0)
			}
			tool.Disasm(path, a, a+64, false)
		}
		tool.Close()
		runtime.ReadMemStats(&ms)
		if got, limit := ms.TotalAlloc-before, 64<<20+64*uint64(len(data)); got > limit {
			t.Errorf("allocated %d MiB for a %d-byte file, more than %d MiB", got>>20, len(data), limit>>20)
		}
	})
}
