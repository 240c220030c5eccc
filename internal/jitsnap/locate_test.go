package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/procfs"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// mapsOf parses /proc/PID/maps lines.
func mapsOf(t *testing.T, lines ...string) []Mapping {
	t.Helper()
	maps, err := procfs.ParseMaps(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return maps
}

// Segments of real files (readelf -lW).
var (
	// Debian's /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1: text at
	// p_vaddr = p_offset = 0; data one page further from its file offset.
	libLLVMSegs = []segment{
		{Vaddr: 0, Memsz: 0x6161880, Off: 0, Filesz: 0x6161880, Exec: true},
		{Vaddr: 0x61630a0, Memsz: 0x7f6c49, Off: 0x61620a0, Filesz: 0x77cde0, Writing: true},
	}
	// Debian's libc.so.6: -z separate-code, p_vaddr = p_offset throughout.
	libcSegs = []segment{
		{Vaddr: 0, Memsz: 0x25388, Off: 0, Filesz: 0x25388},
		{Vaddr: 0x26000, Memsz: 0x1550fc, Off: 0x26000, Filesz: 0x1550fc, Exec: true},
		{Vaddr: 0x17c000, Memsz: 0x52c31, Off: 0x17c000, Filesz: 0x52c31},
		{Vaddr: 0x1cf8d0, Memsz: 0x12680, Off: 0x1cf8d0, Filesz: 0x4f98, Writing: true},
	}
	// testdata/mcjit's jit_host, linked -no-pie at 0x400000.
	jitHostSegs = []segment{
		{Vaddr: 0x400000, Memsz: 0x39d8, Off: 0, Filesz: 0x39d8},
		{Vaddr: 0x404000, Memsz: 0x9871, Off: 0x4000, Filesz: 0x9871, Exec: true},
		{Vaddr: 0x40e000, Memsz: 0x2876, Off: 0xe000, Filesz: 0x2876},
		{Vaddr: 0x411aa8, Memsz: 0x970, Off: 0x10aa8, Filesz: 0x938, Writing: true},
	}
	// A layout where the read-only data segment and the RELRO part of the
	// data segment map the same file page (0x2000), both r--p.
	sharedPageSegs = []segment{
		{Vaddr: 0, Memsz: 0x500, Off: 0, Filesz: 0x500},
		{Vaddr: 0x1000, Memsz: 0x800, Off: 0x1000, Filesz: 0x800, Exec: true},
		{Vaddr: 0x2000, Memsz: 0x150, Off: 0x2000, Filesz: 0x150},
		{Vaddr: 0x3df0, Memsz: 0x1300, Off: 0x2df0, Filesz: 0x1220, Writing: true},
	}
)

func TestLoadBiases(t *testing.T) {
	tests := []struct {
		name    string
		segs    []segment
		maps    []string
		want    []uint64
		wantErr string
	}{
		{
			// A real run of jit_host (pid 483); gdb printed
			// &__jit_debug_descriptor = 0x7fd1e84dbb50 = bias + 0x68dbb50.
			// "rw-p start + value - offset" would give 0x7fd1e84dcb50.
			name: "libLLVM-14",
			segs: libLLVMSegs,
			maps: []string{
				"7fd1e1c00000-7fd1e7d62000 r-xp 00000000 fe:00 325975 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
				"7fd1e7d62000-7fd1e7d63000 ---p 06162000 fe:00 325975 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
				"7fd1e7d63000-7fd1e84d7000 r--p 06162000 fe:00 325975 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
				"7fd1e84d7000-7fd1e84e0000 rw-p 068d6000 fe:00 325975 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
			},
			want: []uint64{0x7fd1e1c00000},
		},
		{
			name: "libc, separate code",
			segs: libcSegs,
			maps: []string{
				"7f3d9ace9000-7f3d9ad0f000 r--p 00000000 fe:00 326269 /usr/lib/x86_64-linux-gnu/libc.so.6",
				"7f3d9ad0f000-7f3d9ae65000 r-xp 00026000 fe:00 326269 /usr/lib/x86_64-linux-gnu/libc.so.6",
				"7f3d9ae65000-7f3d9aeb8000 r--p 0017c000 fe:00 326269 /usr/lib/x86_64-linux-gnu/libc.so.6",
				"7f3d9aeb8000-7f3d9aebc000 r--p 001cf000 fe:00 326269 /usr/lib/x86_64-linux-gnu/libc.so.6",
				"7f3d9aebc000-7f3d9aebe000 rw-p 001d3000 fe:00 326269 /usr/lib/x86_64-linux-gnu/libc.so.6",
			},
			want: []uint64{0x7f3d9ace9000},
		},
		{
			name: "non-PIE executable",
			segs: jitHostSegs,
			maps: []string{
				"00400000-00404000 r--p 00000000 fe:00 1 /bin/jit_host",
				"00404000-0040e000 r-xp 00004000 fe:00 1 /bin/jit_host",
				"0040e000-00411000 r--p 0000e000 fe:00 1 /bin/jit_host",
				"00411000-00412000 r--p 00010000 fe:00 1 /bin/jit_host",
				"00412000-00413000 rw-p 00011000 fe:00 1 /bin/jit_host",
			},
			want: []uint64{0},
		},
		{
			// Page 0x2000 is mapped at 0x7f0000002000 (rodata) and at
			// 0x7f0000003000 (RELRO data), both r--p: only one reading
			// places every segment.
			name: "one file page in two r--p mappings",
			segs: sharedPageSegs,
			maps: []string{
				"7f0000000000-7f0000001000 r--p 00000000 fe:00 7 /lib/x.so",
				"7f0000001000-7f0000002000 r-xp 00001000 fe:00 7 /lib/x.so",
				"7f0000002000-7f0000003000 r--p 00002000 fe:00 7 /lib/x.so",
				"7f0000003000-7f0000004000 r--p 00002000 fe:00 7 /lib/x.so",
				"7f0000004000-7f0000006000 rw-p 00003000 fe:00 7 /lib/x.so",
			},
			want: []uint64{0x7f0000000000},
		},
		{
			name: "loaded twice (dlmopen)",
			segs: libLLVMSegs,
			maps: []string{
				"7e00e1c00000-7e00e7d62000 r-xp 00000000 fe:00 325975 /l.so",
				"7e00e7d63000-7e00e84d7000 r--p 06162000 fe:00 325975 /l.so",
				"7e00e84d7000-7e00e84e0000 rw-p 068d6000 fe:00 325975 /l.so",
				"7fd1e1c00000-7fd1e7d62000 r-xp 00000000 fe:00 325975 /l.so",
				"7fd1e7d63000-7fd1e84d7000 r--p 06162000 fe:00 325975 /l.so",
				"7fd1e84d7000-7fd1e84e0000 rw-p 068d6000 fe:00 325975 /l.so",
			},
			want: []uint64{0x7e00e1c00000, 0x7fd1e1c00000},
		},
		{
			name: "data mapped at the wrong offset",
			segs: libLLVMSegs,
			maps: []string{
				"7fd1e1c00000-7fd1e7d62000 r-xp 00000000 fe:00 325975 /l.so",
				"7fd1e7d63000-7fd1e84d7000 r--p 06163000 fe:00 325975 /l.so",
				"7fd1e84d7000-7fd1e84e0000 rw-p 068d7000 fe:00 325975 /l.so",
			},
			wantErr: "its 3 mappings fit none of the",
		},
		{
			name:    "data segment not mapped",
			segs:    libLLVMSegs,
			maps:    []string{"7fd1e1c00000-7fd1e7d62000 r-xp 00000000 fe:00 325975 /l.so"},
			wantErr: "fit none",
		},
		{
			name:    "offset and address not congruent",
			segs:    []segment{{Vaddr: 0x1010, Memsz: 16, Off: 0x20, Filesz: 16}},
			maps:    []string{"7f0000000000-7f0000001000 r--p 00000000 fe:00 7 /x.so"},
			wantErr: "not congruent",
		},
		{
			name:    "no PT_LOAD",
			maps:    []string{"7f0000000000-7f0000001000 r--p 00000000 fe:00 7 /x.so"},
			wantErr: "no PT_LOAD",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadBiases(tt.segs, mapsOf(t, tt.maps...), 0x1000)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %#x, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %#x, %v; want %#x", got, err, tt.want)
			}
		})
	}
}

// TestLoadBiasLLVMDescriptor is the worked example of loadBiases' doc.
func TestLoadBiasLLVMDescriptor(t *testing.T) {
	maps := mapsOf(t,
		"7fd1e1c00000-7fd1e7d62000 r-xp 00000000 fe:00 325975 /l.so",
		"7fd1e7d62000-7fd1e7d63000 ---p 06162000 fe:00 325975 /l.so",
		"7fd1e7d63000-7fd1e84d7000 r--p 06162000 fe:00 325975 /l.so",
		"7fd1e84d7000-7fd1e84e0000 rw-p 068d6000 fe:00 325975 /l.so")
	const value = 0x68dbb50 // st_value of __jit_debug_descriptor
	b, err := loadBiases(libLLVMSegs, maps, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := value+b[0], uint64(0x7fd1e84dbb50); got != want {
		t.Errorf("got descriptor at %#x, want %#x (what gdb printed)", got, want)
	}
	rw := maps[3]
	if naive := rw.Start + value - rw.Offset; naive == value+b[0] {
		t.Errorf("the naive rw-p formula agrees (%#x); the example no longer shows the page difference", naive)
	}
}

// libLLVM14 is Debian's LLVM 14 shared library, which holds the GDB JIT
// interface symbols in .dynsym only.
const libLLVM14 = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

func TestFindSymbolsLibLLVM(t *testing.T) {
	f, err := elfrel.Open(libLLVM14)
	if err != nil {
		testenv.Missing(t, libLLVM14, "apt-get install libllvm14")
	}
	defer f.Close()
	got, err := findSymbols(f, maxSymbolNames, descriptorSymbol, registerCodeSymbol, "no_such_symbol")
	if err != nil {
		t.Fatal(err)
	}
	if d := got[descriptorSymbol]; d.Value == 0 || d.Size != descriptorSize {
		t.Errorf("got %s value %#x size %d, want a defined %d-byte object", descriptorSymbol, d.Value, d.Size, descriptorSize)
	}
	if r := got[registerCodeSymbol]; r.Value == 0 {
		t.Errorf("got %s value %#x, want a defined function", registerCodeSymbol, r.Value)
	}
	if _, ok := got["no_such_symbol"]; ok {
		t.Errorf("found no_such_symbol, want nothing")
	}
	// debug/elf, an independent reader, agrees.
	ef, err := elf.Open(libLLVM14)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	dyn, err := ef.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{descriptorSymbol, registerCodeSymbol} {
		i := slices.IndexFunc(dyn, func(s elf.Symbol) bool { return s.Name == name && s.Section != elf.SHN_UNDEF })
		if i < 0 || dyn[i].Value != got[name].Value || dyn[i].Size != got[name].Size {
			t.Errorf("%s: findSymbols %+v, debug/elf %+v", name, got[name], dyn[max(i, 0)])
		}
	}
	segs := loadSegments(f)
	if len(segs) < 2 || !segs[0].Exec {
		t.Errorf("got PT_LOAD segments %+v, want text and data", segs)
	}
}

// TestFindSymbolsSparse: a mapped file whose string table claims more
// than the file holds (a sparse file of holes) is refused, naming it,
// without reading the claim into memory.
func TestFindSymbolsSparse(t *testing.T) {
	data := buildELF(elf.ET_DYN, "lib.c", textAt(".text", 0x1000))
	path := filepath.Join(t.TempDir(), "libsparse.so")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	strtab := f.Sections[slices.IndexFunc(f.Sections, func(s elfrel.Section) bool { return s.Type == elf.SHT_SYMTAB })].Link
	shoff := binary.LittleEndian.Uint64(data[40:])
	f.Close()
	const claim = 1 << 30
	// The string table moves to the end of a 1 GiB file of holes.
	hdr := shoff + uint64(strtab)*64
	binary.LittleEndian.PutUint64(data[hdr+24:], 1<<20)
	binary.LittleEndian.PutUint64(data[hdr+32:], claim)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<20+claim); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := regfile.Allocated(fi); !ok || n >= fi.Size() {
		t.Skip("the file system does not make holes")
	}
	// Opened as examine opens it, the file is refused at once.
	if _, err := elfrel.Open(path); err == nil || !strings.Contains(err.Error(), "libsparse.so") || !strings.Contains(err.Error(), "sparse") {
		t.Errorf("elfrel.Open on a sparse file: %v, want an error naming it", err)
	}
	// Read through another ReaderAt, findSymbols' own bound refuses it.
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	f, err = elfrel.NewFile(io.NewSectionReader(fd, 0, fi.Size()), fi.Size(), path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = findSymbols(f, 1<<20, descriptorSymbol)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "libsparse.so") || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("findSymbols on a sparse file: %v, want an error naming it", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("findSymbols allocated %d bytes", alloc)
	}
}

// TestSectionZeroIsNoTable: the header of section 0 holds extended
// counts, not a section, and elfrel validates the links of the others
// only; a header 0 that claims to be a symbol table with a link far out
// of range is passed over, by findSymbols and by checkObject (a fuzzer
// found checkObject indexing with that link), and the real table is
// used.
func TestSectionZeroIsNoTable(t *testing.T) {
	bo := binary.LittleEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Name: "jit.c", Info: byte(elf.STT_FILE), Shndx: uint16(elf.SHN_ABS)},
		{Name: descriptorSymbol, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_OBJECT), Shndx: 1, Value: 0x10, Size: descriptorSize},
	})
	for _, tc := range []struct {
		typ  elf.Type
		tab  elf.SectionType
		name string
	}{
		{elf.ET_DYN, elf.SHT_DYNSYM, ".dynsym"},
		{elf.ET_REL, elf.SHT_SYMTAB, ".symtab"},
	} {
		data := elftest.File{Type: tc.typ, Sections: []elftest.Section{
			{Name: ".data", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Data: make([]byte, 64)},
			{Name: tc.name, Type: tc.tab, Data: symtab, Link: 3, Info: 1, Entsize: elftest.SymSize},
			{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
		}}.Bytes()
		shoff := bo.Uint64(data[40:])
		bo.PutUint32(data[shoff+4:], uint32(tc.tab)) // section 0's sh_type
		bo.PutUint32(data[shoff+40:], 0x30303030)    // and sh_link
		f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "zero.o")
		if err != nil {
			t.Fatalf("%v: %v", tc.typ, err)
		}
		got, err := findSymbols(f, maxSymbolNames, descriptorSymbol)
		if d := got[descriptorSymbol]; err != nil || d.Value != 0x10 || d.Size != descriptorSize {
			t.Errorf("%v: findSymbols = %+v, %v; want %s at 0x10", tc.typ, got, err, descriptorSymbol)
		}
		if tc.typ != elf.ET_REL {
			continue
		}
		_, ident, err := checkObject(data, bo)
		if err != nil || ident != "jit.c" {
			t.Errorf("checkObject: ident %q, %v; want jit.c", ident, err)
		}
	}
}
