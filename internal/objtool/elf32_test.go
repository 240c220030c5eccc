package objtool

import (
	"debug/elf"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestELF32OtherMachinesDisasm: the 32-bit ELF executables and shared
// libraries of other machines, which the object tool reads with the
// standard library, are disassembled as their machine's GNU objdump does:
// a static ARMv7 executable that lld links from a Thumb-2 object and an
// ARM-mode one (mapping symbols tell the two apart), Debian's armhf C
// library (stripped: the Thumb bit of its dynamic symbols tells them
// apart), Debian's o32 MIPS C library (big-endian), and an RV32 executable (whose compressed instructions RV64's
// decoder would misread). Every instruction of the functions listed is
// at objdump's address with objdump's mnemonic, and the executables'
// carry their source lines.
func TestELF32OtherMachinesDisasm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clang := func(t *testing.T) string { return testenv.Tool(t, "clang-19", "clang-19") }
	lld := func(t *testing.T) string { return testenv.Tool(t, "ld.lld-19", "lld-19") }
	link := func(t *testing.T, out string, objs ...string) string {
		p := filepath.Join(dir, out)
		testenv.Run(t, dir, append([]string{lld(t), "-e", "main", "--unresolved-symbols=ignore-all", "-o", p}, objs...)...)
		return p
	}
	compile := func(t *testing.T, out, src string, flags ...string) string {
		p := filepath.Join(dir, out)
		abs, err := filepath.Abs(src)
		if err != nil {
			t.Fatal(err)
		}
		testenv.Run(t, dir, append(append([]string{clang(t)}, flags...), "-O2", "-g", "-c", "-o", p, abs)...)
		return p
	}
	for _, tt := range []struct {
		name    string
		file    func(t *testing.T) string
		objdump [2]string
		fns     *regexp.Regexp // the functions to disassemble
		lines   bool           // whether the file has DWARF
		min     int            // instructions at least
	}{
		{name: "armv7 Thumb and ARM executable", objdump: [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"},
			file: func(t *testing.T) string {
				th := compile(t, "inline-thumb.o", "testdata/inline.c", "--target=armv7-linux-gnueabihf", "-mthumb")
				arm := compile(t, "kernels-arm.o", "../disasm/testdata/kernels.c", "--target=armv7-linux-gnueabihf", "-marm")
				return link(t, "mixed", th, arm)
			},
			fns: regexp.MustCompile("."), lines: true, min: 250},
		{name: "armhf libc", objdump: [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"},
			file: func(t *testing.T) string {
				return testenv.File(t, "/usr/arm-linux-gnueabihf/lib/libc.so.6", "libc6-armhf-cross")
			},
			fns: regexp.MustCompile("^(malloc|free|strlen|memchr|qsort|__libc_start_main|printf|fopen)$"), min: 500},
		{name: "mips libc", objdump: [2]string{"mips-linux-gnu-objdump", "binutils-mips-linux-gnu"},
			file: func(t *testing.T) string {
				return testenv.File(t, "/usr/mips-linux-gnu/lib/libc.so.6", "libc6-mips-cross")
			},
			fns: regexp.MustCompile("^(malloc|free|strlen|memchr|qsort|__libc_start_main|printf|fopen)$"), min: 500},
		{name: "rv32 executable", objdump: [2]string{"riscv64-linux-gnu-objdump", "binutils-riscv64-linux-gnu"},
			file: func(t *testing.T) string {
				// lld relaxes calls to c.jal, and float code has c.flw
				// and c.fsw: RV32's own compressed encodings.
				flags := []string{"--target=riscv32-linux-gnu", "-march=rv32gc"}
				return link(t, "rv32", compile(t, "inline-rv32.o", "testdata/inline.c", flags...), compile(t, "vector-rv32.o", "../disasm/testdata/vector.c", flags...))
			},
			fns: regexp.MustCompile("."), lines: true, min: 150},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objdump := testenv.Tool(t, tt.objdump[0], tt.objdump[1])
			file := tt.file(t)
			ef, err := elf.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			if ef.Class != elf.ELFCLASS32 || ef.Type == elf.ET_REL {
				t.Fatalf("%s is %v %v, want a 32-bit executable or library", file, ef.Class, ef.Type)
			}
			tool := New(Options{Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
			defer tool.Close()
			if _, ok := tool.foreignFor(file); !ok {
				t.Fatalf("%s is not read with the standard library", file)
			}
			of, err := tool.Open(file, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			syms, err := of.Symbols(tt.fns, 0)
			if err != nil {
				t.Fatal(err)
			}
			insts, lines := 0, 0
			for _, s := range syms {
				if !inCodeSection(ef, s.Start&^1) {
					continue
				}
				got, err := tool.Disasm(file, s.Start, s.End, false)
				if err != nil {
					t.Fatalf("Disasm(%s): %v", s.Name[0], err)
				}
				want := map[uint64]string{}
				for _, w := range objdumpMnemonics(t, objdump, file, s.Start&^1, s.End) {
					want[w.addr] = w.mnem
				}
				skipped := 0
				for i, in := range got {
					next := s.End
					if i+1 < len(got) {
						next = got[i+1].Addr
					}
					w, ok := want[in.Addr]
					if !ok && zeroBytes(t, ef, in.Addr, int(next-in.Addr)) {
						skipped++ // objdump shows zeros at the end as "..."
						continue
					}
					if !ok || firstField(in.Text) != w {
						t.Errorf("%s: %#x %q, objdump: %q", s.Name[0], in.Addr, in.Text, w)
						break
					}
					if in.Line != 0 {
						lines++
					}
				}
				if len(got)-skipped != len(want) {
					t.Errorf("%s [%#x, %#x): %d instructions, objdump prints %d", s.Name[0], s.Start, s.End, len(got), len(want))
				}
				insts += len(got)
			}
			if insts < tt.min {
				t.Errorf("%d instructions in %d symbols, want at least %d", insts, len(syms), tt.min)
			}
			if tt.lines && lines < insts*3/4 {
				t.Errorf("%d of %d instructions have a line, want 3 in 4", lines, insts)
			}
			t.Logf("%d symbols, %d instructions, %d with lines", len(syms), insts, lines)
		})
	}
}

// inCodeSection reports whether an executable section of f holds addr.
func inCodeSection(f *elf.File, addr uint64) bool {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr <= addr && addr < s.Addr+s.Size {
			return true
		}
	}
	return false
}

// zeroBytes reports whether the n bytes of f at addr are all zero.
func zeroBytes(t *testing.T, f *elf.File, addr uint64, n int) bool {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr <= addr && addr+uint64(n) <= p.Vaddr+p.Filesz {
			b := make([]byte, n)
			if _, err := p.ReadAt(b, int64(addr-p.Vaddr)); err != nil {
				t.Fatal(err)
			}
			for _, c := range b {
				if c != 0 {
					return false
				}
			}
			return true
		}
	}
	return false
}
