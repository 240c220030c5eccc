package elfrel

import (
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// FuzzNewFile reads arbitrary input as an object: headers, symbols, the
// relocated DWARF sections and the *dwarf.Data on them. It must not panic,
// must not allocate much more than the input's size whatever its headers
// claim, and every error must be typed and name the file.
func FuzzNewFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.o")
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		if _, err := file.Symbols(); err != nil {
			checkFuzzErr(t, err)
		}
		d, err := file.DWARF()
		runtime.ReadMemStats(&after)
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, 16*uint64(len(data))+16<<20; alloc > limit {
			t.Fatalf("allocated %d bytes for a %d-byte input, want at most %d", alloc, len(data), limit)
		}
		if errors.Is(err, ErrNoDWARF) {
			return
		}
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		if _, err := d.Data(); err != nil {
			checkFuzzErr(t, err)
		}
	})
}

func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	if !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("got %T %v, want *FormatError or *UnsupportedError", err, err)
	}
	if !strings.HasPrefix(err.Error(), "fuzz.o: ") {
		t.Fatalf("error %q does not name the file", err)
	}
}

// TestFuzzCorpus checks that testdata/fuzz/FuzzNewFile holds the seeds:
// the crafted relocation objects of these tests and the compiled objects
// of package jitsym's testdata. -update rewrites them.
func TestFuzzCorpus(t *testing.T) {
	seeds := map[string][]byte{
		"reloc-x86-64":  relocObject(elf.EM_X86_64, 0x500000, []elftest.Rela{{Off: 0, Sym: symFoo, Type: uint32(elf.R_X86_64_64), Addend: 4}, {Off: 8, Sym: symDebugStr, Type: uint32(elf.R_X86_64_32), Addend: 6}}).Bytes(),
		"reloc-aarch64": relocObject(elf.EM_AARCH64, 0, []elftest.Rela{{Off: 0, Sym: symText, Type: uint32(elf.R_AARCH64_ABS64)}, {Off: 16, Sym: symText, Type: uint32(elf.R_AARCH64_PREL32)}}).Bytes(),
		"reloc-riscv64": relocObject(elf.EM_RISCV, 0, []elftest.Rela{{Off: 0, Sym: symFoo, Type: uint32(elf.R_RISCV_ADD32)}, {Off: 0, Sym: symText, Type: uint32(elf.R_RISCV_SUB32)},
			{Off: 62, Sym: symFoo, Type: uint32(rRISCVSetULEB128)}, {Off: 62, Sym: symText, Type: uint32(rRISCVSubULEB128)}, {Off: 8, Sym: symFoo, Type: uint32(elf.R_RISCV_SET6)}}).Bytes(),
	}
	objs, err := filepath.Glob(filepath.Join("..", "jitsym", "testdata", "*.o"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no objects in ../jitsym/testdata: %v", err)
	}
	for _, obj := range objs {
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		seeds[strings.TrimSuffix(filepath.Base(obj), ".o")] = data
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzNewFile")
	for name, data := range seeds {
		want := []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data))
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or stale (err %v); run go test -run Corpus -update", path, err)
		}
	}
}
