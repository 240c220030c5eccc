package objtool

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestOtherMachineJITObjects runs the code views' questions on the JIT
// objects (relocatable, sections at scattered load addresses) of the
// other machines LLVM JITs for (64-bit, AArch64 with SVE and SVE2, and
// 386, 32-bit PowerPC, RV32, MIPS and ARMv7, ARM and Thumb):
// every function is listed, every instruction of it carries its source
// line, and Disasm decodes at the addresses, with the mnemonics, that the
// machine's GNU objdump prints (big-endian ppc64 and s390x included), or
// for LoongArch, which no GNU objdump on Debian 12 reads, llvm-objdump.
func TestOtherMachineJITObjects(t *testing.T) {
	testenv.Long(t, "compiles JIT objects for other machines and compares with objdump")
	t.Parallel()
	cross := func(triple string) [2]string { return [2]string{triple + "-objdump", "binutils-" + triple} }
	for _, m := range []struct {
		triple  string
		objdump [2]string // the tool and its package
		clang   string    // clang-14 if empty
		flags   []string
	}{
		{triple: "riscv64-linux-gnu", objdump: cross("riscv64-linux-gnu")},
		// RV32: its compressed instructions are not all RV64's.
		{triple: "riscv32-linux-gnu", objdump: cross("riscv64-linux-gnu")},
		{triple: "powerpc64le-linux-gnu", objdump: cross("powerpc64le-linux-gnu")},
		// ELFv1, clang's default for big-endian: a function's symbol
		// names its descriptor in .opd, which points to its code.
		{triple: "powerpc64-linux-gnu", objdump: cross("powerpc64le-linux-gnu")},
		{triple: "powerpc64-linux-gnu", objdump: cross("powerpc64le-linux-gnu"), flags: []string{"-mabi=elfv2"}},
		{triple: "s390x-linux-gnu", objdump: cross("s390x-linux-gnu")},
		// A 32-bit object: ELFCLASS32, SHT_REL relocations.
		{triple: "i386-linux-gnu", objdump: [2]string{"objdump", "binutils"}},
		// 32-bit and big-endian, SHT_RELA.
		{triple: "powerpc-linux-gnu", objdump: cross("powerpc64le-linux-gnu")},
		// ARM mode, clang's default for ARMv7, and Thumb-2, GCC's for
		// armhf (function symbols with the Thumb bit).
		{triple: "armv7-linux-gnueabihf", objdump: cross("arm-linux-gnueabihf"), flags: []string{"-marm"}},
		{triple: "armv7-linux-gnueabihf", objdump: cross("arm-linux-gnueabihf"), flags: []string{"-mthumb"}},
		// MIPS: o32 big-endian, n64 little-endian.
		{triple: "mips-linux-gnu", objdump: cross("mips-linux-gnu")},
		{triple: "mips64el-linux-gnuabi64", objdump: cross("mips64el-linux-gnuabi64")},
		// AArch64 with SVE and SVE2, as LLVM's JITs compile for
		// Graviton 3 and 4 (-mcpu=host): its vector loops.
		{triple: "aarch64-linux-gnu", objdump: cross("aarch64-linux-gnu"), clang: "clang-19", flags: []string{"-mcpu=neoverse-v1"}},
		{triple: "aarch64-linux-gnu", objdump: cross("aarch64-linux-gnu"), clang: "clang-19", flags: []string{"-mcpu=neoverse-n2"}},
		// LASX: vector code too.
		{triple: "loongarch64-linux-gnu", objdump: [2]string{"llvm-objdump-19", "llvm-19"}, clang: "clang-19", flags: []string{"-mlasx"}},
	} {
		t.Run(m.triple+strings.Join(m.flags, ""), func(t *testing.T) {
			objdump := testenv.Tool(t, m.objdump[0], m.objdump[1])
			clang := cmp.Or(m.clang, "clang-14")
			obj := jitObject(t, clang, m.triple, m.flags...)
			tool := New(Options{Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
			defer tool.Close()
			of, err := tool.Open(obj, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			syms, err := of.Symbols(regexp.MustCompile("."), 0)
			if err != nil {
				t.Fatal(err)
			}
			ef, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			inCode := func(addr uint64) bool {
				for _, sec := range ef.Sections {
					if sec.Flags&elf.SHF_EXECINSTR != 0 && sec.Addr <= addr && addr < sec.Addr+sec.Size {
						return true
					}
				}
				return false
			}
			names := map[string]bool{}
			insts, lines := 0, 0
			for _, s := range syms {
				if !inCode(s.Start) {
					continue // data
				}
				names[s.Name[0]] = true
				if strings.HasPrefix(s.Name[0], ".L") {
					t.Errorf("Symbols lists the assembler's label %s", s.Name[0])
				}
				got, err := tool.Disasm(obj, s.Start, s.End, false)
				if err != nil {
					t.Fatalf("Disasm(%s): %v", s.Name[0], err)
				}
				// objdump shows a run of zero words at the end as "...",
				// where Disasm decodes each: the words of the traceback
				// table after a PowerPC function.
				want := map[uint64]string{}
				for _, w := range objdumpMnemonics(t, objdump, obj, s.Start, s.End) {
					want[w.addr] = w.mnem
				}
				matched := 0
				for _, in := range got {
					mnem := firstField(in.Text)
					w, ok := want[in.Addr]
					if !ok && in.Text == ".long 0x0" {
						continue
					}
					if mnem != w {
						t.Errorf("%s: %#x %q, objdump: %q", s.Name[0], in.Addr, in.Text, w)
						break
					}
					matched++
					if !strings.HasSuffix(in.File, "inline.c") || in.Function == "" {
						t.Errorf("%s: %#x %s has no source: %q %s:%d", s.Name[0], in.Addr, in.Text, in.Function, in.File, in.Line)
						break
					}
					if in.Line != 0 { // 0: code the compiler gives no line
						lines++
					}
				}
				if matched != len(want) {
					t.Errorf("%s [%#x, %#x): %d instructions at objdump's addresses, objdump prints %d", s.Name[0], s.Start, s.End, matched, len(want))
				}
				insts += len(got)
			}
			if lines < insts*3/4 {
				t.Errorf("%d of %d instructions have a line, want 3 in 4", lines, insts)
			}
			for _, fn := range []string{"main", "work", "sorted"} {
				if !names[fn] {
					t.Errorf("Symbols lists no %s in code: %v", fn, names)
				}
			}
			t.Logf("%d symbols, %d instructions", len(syms), insts)
		})
	}
}

// TestNoDecoderForMachine: a 64-bit executable of a machine no decoder
// reads (SPARC V9) has its symbols read in process, and Disasm says it
// cannot decode its code, naming the file, the machine and the way to
// have objdump try.
func TestNoDecoderForMachine(t *testing.T) {
	t.Parallel()
	bo := binary.BigEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Name: "main", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 1, Value: 0x100000, Size: 8},
	})
	data := elftest.File{Type: elf.ET_EXEC, Machine: elf.EM_SPARCV9, Order: bo, Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x100000, Data: []byte{0x81, 0xc3, 0xe0, 0x08, 0x01, 0, 0, 0}},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: symtab, Link: 3, Info: 1, Entsize: elftest.SymSize},
		{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
	}}.Bytes()
	file := filepath.Join(t.TempDir(), "sparc")
	if err := os.WriteFile(file, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := New(Options{})
	defer tool.Close()
	of, err := tool.Open(file, 0, ^uint64(0), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	syms, err := of.Symbols(regexp.MustCompile("^main$"), 0)
	if err != nil || len(syms) != 1 || syms[0].Start != 0x100000 {
		t.Fatalf("Symbols(main) = %v, %v; want main at 0x100000", syms, err)
	}
	_, err = tool.Disasm(file, syms[0].Start, syms[0].End, false)
	if err == nil {
		t.Fatal("Disasm of SPARC code succeeded")
	}
	for _, want := range []string{file, "EM_SPARCV9", "-objtool=binutils"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Disasm error %q does not say %q", err, want)
		}
	}
}

// jitObject compiles testdata/inline.c with clang (a tool name such as
// "clang-14") for triple, each function in a section of its own, and
// scatters the sections over the address space as a JIT loads them (low
// in it for a 32-bit object); it returns the object's path.
func jitObject(t *testing.T, clang, triple string, flags ...string) string {
	t.Helper()
	tool := testenv.Tool(t, clang, clang)
	obj := filepath.Join(t.TempDir(), "inline.o")
	args := append([]string{"--target=" + triple, "-g", "-O2", "-ffunction-sections", "-c", "-o", obj, "testdata/inline.c"}, flags...)
	if err := synth.Compile(tool, args...); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	opt := synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 30, Seed: 3}
	if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS32 {
		opt.Base, opt.Span = 0x10000000, 1<<28
	}
	if _, err := synth.Scatter(data, opt); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return obj
}

// objdumpInst is an instruction's address and mnemonic as objdump prints
// it.
type objdumpInst struct {
	addr uint64
	mnem string
}

// objdumpMnemonics returns the instructions objdump prints for
// [start, stop) of file.
func objdumpMnemonics(t *testing.T, objdump, file string, start, stop uint64) []objdumpInst {
	t.Helper()
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", fmt.Sprintf("--start-address=%#x", start), fmt.Sprintf("--stop-address=%#x", stop), file).Output()
	if err != nil {
		t.Fatalf("%s: %v", objdump, err)
	}
	var insts []objdumpInst
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "  401126:\tcall ..." (GNU) or "  401126:   \tcall ..." (LLVM).
		addr, text, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(text, " ") && !strings.HasPrefix(text, "\t") {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64)
		if err != nil {
			continue
		}
		insts = append(insts, objdumpInst{a, firstField(text)})
	}
	return insts
}

// firstField returns the mnemonic of an instruction's text: objdump
// follows it with a tab (x86, RISC-V, s390x) or pads it with spaces
// (PowerPC, and LoongArch before a tab).
func firstField(text string) string {
	if f := strings.Fields(text); len(f) > 0 {
		return f[0]
	}
	return ""
}

// TestDecodeARMMappingSymbols: 32-bit ARM code is decoded by the runs
// its mapping symbols mark, a run starting wherever the piece asked for
// does (in data too), the last of several marks at one address counting;
// Thumb code, marked or (without marks) a function with the Thumb bit,
// is decoded as Thumb.
func TestDecodeARMMappingSymbols(t *testing.T) {
	mov := []byte{0x01, 0x00, 0xa0, 0xe3} // mov r0, #1
	var code []byte
	for _, w := range [][]byte{mov, mov, {0x3c, 0, 0, 0}, {0x20, 0x83, 0xb8, 0xed}, mov} {
		code = append(code, w...)
	}
	b := &binFile{f: &elfrel.File{ByteOrder: binary.LittleEndian}}
	b.armOnce.Do(func() {})
	sec := &elfrel.Section{Addr: 0x1000, Size: uint64(len(code))}
	for _, tt := range []struct {
		name string
		as   armSection
		lo   uint64
		want []string
	}{
		{name: "no marks", lo: 0x1000, want: []string{"mov\tr0, #1", "mov\tr0, #1", "andeq\tr0, r0, ip, lsr r0", "ldc\t3, cr8, [r8, #128]!\t@ 0x80", "mov\tr0, #1"}},
		{name: "a literal pool", lo: 0x1000,
			as:   armSection{marks: []armMark{{0x1000, 'a'}, {0x1008, 'd'}, {0x1010, 'd'}, {0x1010, 'a'}}},
			want: []string{"mov\tr0, #1", "mov\tr0, #1", ".word\t0x0000003c", ".word\t0xedb88320", "mov\tr0, #1"}},
		{name: "from inside the pool", lo: 0x100c,
			as:   armSection{marks: []armMark{{0x1000, 'a'}, {0x1008, 'd'}, {0x1010, 'a'}}},
			want: []string{".word\t0xedb88320", "mov\tr0, #1"}},
		// As Thumb code, the bytes of mov r0, #1 are movs r1, r0 and a
		// 16-bit branch.
		{name: "a Thumb run", lo: 0x1000, as: armSection{marks: []armMark{{0x1000, 'a'}, {0x1010, 't'}}},
			want: []string{"mov\tr0, #1", "mov\tr0, #1", "andeq\tr0, r0, ip, lsr r0", "ldc\t3, cr8, [r8, #128]!\t@ 0x80", "movs\tr1, r0", "b.n\t0x1756"}},
		{name: "functions of a stripped library", lo: 0x1000, as: armSection{marks: []armMark{{0x1000, 'a'}, {0x1004, 't'}, {0x1008, 'a'}}},
			want: []string{"mov\tr0, #1", "movs\tr1, r0", "b.n\t0x174a", "andeq\tr0, r0, ip, lsr r0", "ldc\t3, cr8, [r8, #128]!\t@ 0x80", "mov\tr0, #1"}},
		{name: "from inside a Thumb function", lo: 0x1006, as: armSection{marks: []armMark{{0x1000, 'a'}, {0x1004, 't'}, {0x1008, 'a'}}},
			want: []string{"b.n\t0x174a", "andeq\tr0, r0, ip, lsr r0", "ldc\t3, cr8, [r8, #128]!\t@ 0x80", "mov\tr0, #1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := tt.as
			b.arm = map[int]*armSection{3: &as}
			p := piece{sec: sec, idx: 3, lo: tt.lo, hi: sec.Addr + sec.Size - 1}
			insts, err := decodeARM(b, p, code[tt.lo-sec.Addr:], nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			next := tt.lo
			for _, in := range insts {
				if in.Addr != next {
					t.Errorf("instruction at %#x, want %#x", in.Addr, next)
				}
				next = in.Addr + uint64(in.Len)
				got = append(got, in.Text)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q,\nwant %q", got, tt.want)
			}
		})
	}
}

// TestMalformedDescriptorsWarn: an ELFv1 object whose .opd relocations
// are broken keeps its symbols, at their descriptors, and the object tool
// says once what is wrong with the file.
func TestMalformedDescriptorsWarn(t *testing.T) {
	bo := binary.BigEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Info: byte(elf.STT_SECTION), Shndx: 1},
		{Name: "f", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 2, Size: 8},
	})
	bad := elftest.RelaData(bo, []elftest.Rela{{Off: 0, Sym: 9, Type: uint32(elf.R_PPC64_ADDR64)}})
	data := elftest.File{Machine: elf.EM_PPC64, Order: bo, Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x10000000, Data: make([]byte, 8)},
		{Name: ".opd", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: 0x10001000, Data: make([]byte, 24)},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: symtab, Link: 4, Info: 2, Entsize: elftest.SymSize},
		{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
		{Name: ".rela.opd", Type: elf.SHT_RELA, Data: bad, Link: 3, Info: 2, Entsize: elftest.RelaSize},
	}}.Bytes()
	obj := filepath.Join(t.TempDir(), "v1.o")
	if err := os.WriteFile(obj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	tool := New(Options{Warn: func(msg string) { warnings = append(warnings, msg) }})
	defer tool.Close()
	of, err := tool.Open(obj, 0, ^uint64(0), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		syms, err := of.Symbols(regexp.MustCompile("^f$"), 0)
		if err != nil || len(syms) != 1 || syms[0].Start != 0x10001000 {
			t.Fatalf("Symbols(f) = %+v, %v; want f at its descriptor, 0x10001000", syms, err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], obj) || !strings.Contains(warnings[0], "symbol index 9") {
		t.Errorf("warnings %q, want one naming %s and the bad relocation", warnings, obj)
	}
}
