package cfi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// testFDE is one function of a table ehFrame writes.
type testFDE struct {
	lo, size uint64
	instr    []byte
}

// ehFrame writes an .eh_frame as compilers do: a CIE (augmentation "zR",
// FDE addresses absolute udata8, code alignment 1, data alignment
// dataAlign, return address column ra, initial instructions cieInstr)
// and an FDE per function, each padded with DW_CFA_nop, then the
// terminator.
func ehFrame(dataAlign int8, ra byte, cieInstr []byte, fdes ...testFDE) []byte {
	le := binary.LittleEndian
	var out []byte
	entry := func(body []byte) {
		for (len(body)+4)%8 != 0 {
			body = append(body, cfaNop)
		}
		out = le.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	cie := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, byte(dataAlign) & 0x7f, ra, 1, peUdata8}
	entry(append(cie, cieInstr...))
	for _, f := range fdes {
		body := le.AppendUint32(nil, uint32(len(out)+4)) // back to the CIE at 0
		body = le.AppendUint64(body, f.lo)
		body = le.AppendUint64(body, f.size)
		body = append(body, 0) // no augmentation data
		entry(append(body, f.instr...))
	}
	return le.AppendUint32(out, 0)
}

// stackMem is memory of 8-byte words from base.
func stackMem(base uint64, words ...uint64) Memory {
	return func(addr uint64) (uint64, bool) {
		if addr < base || (addr-base)%8 != 0 || (addr-base)/8 >= uint64(len(words)) {
			return 0, false
		}
		return words[(addr-base)/8], true
	}
}

// x86Table is three functions as GCC describes them: leaf [0x1000,
// 0x1040), which keeps the CFA at rsp+8; mid [0x2000, 0x2100), which
// pushes rbp at 0x2000 and runs on rbp from 0x2004; top [0x3000,
// 0x3100), the outermost (its return address undefined, as _start's);
// and a PLT entry [0x4000, 0x4020) whose CFA is an expression.
func x86Table(t *testing.T) *Table {
	t.Helper()
	cieInstr := []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}
	plt := []byte{cfaDefCFAExpression, 11, opBreg0 + 7, 8, opBreg0 + 16, 0, opLit0 + 15, opAnd, opLit0 + 11, opGe, opLit0 + 3, opShl, opPlus}
	data := ehFrame(-8, 16, cieInstr,
		testFDE{0x1000, 0x40, nil},
		testFDE{0x2000, 0x100, []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 6, 2, cfaAdvanceLoc | 3, cfaDefCFARegister, 6}},
		testFDE{0x3000, 0x100, []byte{cfaUndefined, 16}},
		testFDE{0x4000, 0x20, plt},
	)
	tab, err := New("x86.o", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: data, Addr: 0x500})
	if err != nil || tab.Len() != 4 {
		t.Fatalf("New: %d FDEs, %v", tab.Len(), err)
	}
	return tab
}

func TestUnwindX86(t *testing.T) {
	tab := x86Table(t)
	const bias = 0x5550_0000_0000
	find := func(pc uint64) (*Table, uint64, bool) {
		if pc < bias {
			return nil, 0, false
		}
		return tab, bias, true
	}
	// leaf at 0x1010 with rsp 0x7000, called from mid at 0x2050, whose
	// rbp is 0x7010, called from top at 0x3020.
	stack := []uint64{bias + 0x2050, 0, 0x7100, bias + 0x3020}
	var regs Regs
	regs.Set(7, 0x7000)
	regs.Set(6, 0x7010)
	rets, err := Unwind(X86_64, regs, bias+0x1010, stackMem(0x7000, stack...), find, 100, nil)
	if err != nil || !slices.Equal(rets, []uint64{bias + 0x2050, bias + 0x3020}) {
		t.Errorf("Unwind: %#x, %v; want mid's and top's return addresses", rets, err)
	}

	// mid's rbp, restored from its frame.
	caller, ret, _, end, err := tab.Step(0x204f, func() *Regs { r := regs; r.Set(7, 0x7008); return &r }(), stackMem(0x7000, stack...))
	if rbp, _ := caller.Get(6); err != nil || end || ret != bias+0x3020 || rbp != 0x7100 {
		t.Errorf("Step in mid: return %#x, rbp %#x, end %v, %v", ret, rbp, end, err)
	}

	// The stack copy ends before mid's frame: one return address.
	rets, err = Unwind(X86_64, regs, bias+0x1010, stackMem(0x7000, stack[:2]...), find, 100, nil)
	if !errors.Is(err, ErrMemory) || !slices.Equal(rets, []uint64{bias + 0x2050}) {
		t.Errorf("short stack: %#x, %v", rets, err)
	}
	// Code the table has no entry for is unwound by its frame pointer:
	// at 0x5000, rbp 0x7010 points at mid's frame record.
	if rets, err := Unwind(X86_64, regs, bias+0x5000, stackMem(0x7000, stack...), find, 100, nil); err != nil || !slices.Equal(rets, []uint64{bias + 0x3020}) {
		t.Errorf("no FDE: %#x, %v; want top's return address", rets, err)
	}
	// So is JIT code, which has no table: leaf called from JIT code at
	// 0x9000050, whose frame record is where mid's was.
	const jit = 0x9000000
	jitStack := []uint64{jit + 0x50, 0, 0x7100, bias + 0x3020}
	withJIT := func(pc uint64) (*Table, uint64, bool) {
		if pc >= jit && pc < jit+0x1000 {
			return nil, 0, true
		}
		return find(pc)
	}
	if rets, err := Unwind(X86_64, regs, bias+0x1010, stackMem(0x7000, jitStack...), withJIT, 100, nil); err != nil || !slices.Equal(rets, []uint64{jit + 0x50, bias + 0x3020}) {
		t.Errorf("through JIT code: %#x, %v; want the JIT code's and top's return addresses", rets, err)
	}
	// A frame pointer below the stack pointer is not one.
	noFP := regs
	noFP.Set(6, 0x10)
	if rets, err := Unwind(X86_64, noFP, bias+0x5000, stackMem(0x7000, stack...), find, 100, nil); !errors.Is(err, ErrNoEntry) || len(rets) != 0 {
		t.Errorf("no FDE, no frame pointer: %#x, %v", rets, err)
	}
	// A pc in no code known.
	if rets, err := Unwind(X86_64, regs, 0x5000, stackMem(0x7000, stack...), find, 100, nil); !errors.Is(err, ErrNoEntry) || len(rets) != 0 {
		t.Errorf("unknown pc: %#x, %v", rets, err)
	}
	// At most max.
	if rets, err := Unwind(X86_64, regs, bias+0x1010, stackMem(0x7000, stack...), find, 1, nil); err != nil || len(rets) != 1 {
		t.Errorf("max 1: %#x, %v", rets, err)
	}
	// A return address that leads back with the stack pointer not moving
	// up stops.
	loop := []uint64{bias + 0x1010}
	var low Regs
	low.Set(7, 0x7000)
	if _, err := Unwind(X86_64, low, bias+0x1010, func(a uint64) (uint64, bool) { return loop[0], true }, func(pc uint64) (*Table, uint64, bool) {
		return tab, bias, true
	}, 1000, nil); err != nil {
		// the CFA moves up 8 each frame: bounded by max, not an error
		t.Errorf("loop: %v", err)
	}

	// The work allowed: each step costs its entry's instructions and its
	// CIE's; a step starts while some is left.
	cost := func(addr uint64) int64 {
		f, _ := tab.find(addr)
		return int64(len(f.cie.instr) + len(f.instr))
	}
	leaf, mid := cost(0x1010), cost(0x204f)
	for _, tc := range []struct {
		work int64
		n    int
		err  error
	}{{1, 1, ErrWork}, {leaf, 1, ErrWork}, {leaf + 1, 2, ErrWork}, {leaf + mid, 2, ErrWork}, {leaf + mid + 1, 2, nil}} {
		work := tc.work
		rets, err := Unwind(X86_64, regs, bias+0x1010, stackMem(0x7000, stack...), find, 100, &work)
		if len(rets) != tc.n || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("work %d: %#x, %v; want %d addresses and %v", tc.work, rets, err, tc.n, tc.err)
		}
	}

	// The PLT's expression: rsp+8, or rsp+16 from the entry's 11th byte.
	for _, tc := range []struct{ pc, cfa uint64 }{{0x4005, 0x7008}, {0x400b, 0x7010}} {
		r := regs
		r.Set(16, bias+tc.pc)
		caller, _, _, _, err := tab.Step(tc.pc, &r, stackMem(0x7000, 1, 2, 3))
		if sp, _ := caller.Get(7); err != nil || sp != tc.cfa {
			t.Errorf("PLT at %#x: CFA %#x, %v; want %#x", tc.pc, sp, err, tc.cfa)
		}
	}
}

// TestUnwindARM64: AArch64's return address column is the link register,
// a leaf's return address is in it, and x29 and x30 are saved as clang
// and GCC save them.
func TestUnwindARM64(t *testing.T) {
	cieInstr := []byte{cfaDefCFA, 31, 0}
	data := ehFrame(-4, 30, cieInstr,
		testFDE{0x1000, 0x40, nil},
		// stp x29, x30, [sp, #-16]!; mov x29, sp
		testFDE{0x2000, 0x100, []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 30, 2, cfaOffset | 29, 4, cfaAdvanceLoc | 1, cfaDefCFA, 29, 16}},
		testFDE{0x3000, 0x100, []byte{cfaUndefined, 30}},
	)
	tab, err := New("a64.o", ARM64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	var regs Regs
	regs.Set(31, 0x7000) // sp
	regs.Set(29, 0x7000) // mid's frame record at sp
	regs.Set(30, 0x2050) // lr: leaf returns into mid
	stack := []uint64{0x7400, 0x3020}
	rets, err := Unwind(ARM64, regs, 0x1010, stackMem(0x7000, stack...), func(pc uint64) (*Table, uint64, bool) { return tab, 0, true }, 100, nil)
	if err != nil || !slices.Equal(rets, []uint64{0x2050, 0x3020}) {
		t.Errorf("Unwind: %#x, %v; want mid's and top's return addresses", rets, err)
	}
}

// TestDamagedTables: tables cut short or with impossible fields give a
// FormatError naming the file and the offset, and keep what was read.
func TestDamagedTables(t *testing.T) {
	good := ehFrame(-8, 16, []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}, testFDE{0x1000, 0x40, nil}, testFDE{0x2000, 0x40, nil})
	for _, tc := range []struct {
		name string
		data []byte
		fdes int
	}{
		{"cut in the second FDE", good[:len(good)-12], 1},
		{"length past the end", func() []byte {
			b := slices.Clone(good)
			binary.LittleEndian.PutUint32(b[24:], 1<<20)
			return b
		}(), 0},
		{"CIE pointer before the section", func() []byte {
			b := slices.Clone(good)
			binary.LittleEndian.PutUint32(b[28:], 1<<20)
			return b
		}(), 0},
		{"CIE version 9", func() []byte {
			b := slices.Clone(good)
			b[8] = 9
			return b
		}(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := New("bad.so", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: tc.data})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.File != "bad.so" || fe.Section != ".eh_frame" {
				t.Fatalf("error %v, want a FormatError of bad.so's .eh_frame", err)
			}
			if tab.Len() != tc.fdes {
				t.Errorf("%d FDEs kept, want %d", tab.Len(), tc.fdes)
			}
		})
	}
	// Instructions that cannot be run: Step says where.
	bad := ehFrame(-8, 16, []byte{cfaDefCFA, 7, 8}, testFDE{0x1000, 0x40, []byte{0x3f}}, testFDE{0x2000, 0x40, []byte{cfaRestoreState}})
	tab, err := New("bad.so", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: bad})
	if err != nil {
		t.Fatal(err)
	}
	var regs Regs
	regs.Set(7, 0x7000)
	for _, pc := range []uint64{0x1000, 0x2000} {
		_, _, _, _, err := tab.Step(pc, &regs, stackMem(0x7000, 1))
		var se *StepError
		if !errors.As(err, &se) || se.File != "bad.so" || se.Addr != pc {
			t.Errorf("at %#x: %v, want a StepError", pc, err)
		}
	}
}

// FuzzTable: no table, address or memory panics, hangs or allocates
// without bound.
func FuzzTable(f *testing.F) {
	f.Add(ehFrame(-8, 16, []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1},
		testFDE{0x1000, 0x40, []byte{cfaAdvanceLoc | 1, cfaRememberState, cfaDefCFAOffset, 16, cfaRestoreState}},
		testFDE{0x4000, 0x20, []byte{cfaDefCFAExpression, 5, opBreg0 + 7, 8, opLit0 + 1, opPlus, opDeref}}), uint64(0x1002), false)
	f.Add(ehFrame(-4, 30, []byte{cfaDefCFA, 31, 0}, testFDE{0x2000, 0x100, []byte{cfaAdvanceLoc | 1, cfaDefCFA, 29, 16, cfaOffset | 30, 2}}), uint64(0x2004), true)
	f.Fuzz(func(t *testing.T, data []byte, pc uint64, debugFrame bool) {
		name := ".eh_frame"
		if debugFrame {
			name = ".debug_frame"
		}
		tab, _ := New("f.so", X86_64, binary.LittleEndian, 8, Section{Name: name, Data: data, Addr: 0x1000})
		var regs Regs
		for i := range 17 {
			regs.Set(i, 0x7000+uint64(i)*8)
		}
		mem := func(a uint64) (uint64, bool) { return a ^ 0x55, a&7 == 0 }
		tab.Step(pc, &regs, mem)
		work := int64(1 << 16)
		Unwind(X86_64, regs, pc, mem, func(uint64) (*Table, uint64, bool) { return tab, 0, true }, 64, &work)
	})
}

// TestManyCIEs: a table with a CIE per FDE (which compilers do not write,
// but a file can hold) keeps the initial rows of the first maxInitials
// only, and steps through every FDE all the same.
func TestManyCIEs(t *testing.T) {
	var data []byte
	const n = maxInitials + 50
	for i := range n {
		one := ehFrame(-8, 16, []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}, testFDE{0x1000 + 0x100*uint64(i), 0x40, nil})
		data = append(data, one[:len(one)-4]...) // without its terminator
	}
	tab, err := New("many.so", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: data})
	if err != nil || tab.Len() != n {
		t.Fatalf("New: %d FDEs, %v", tab.Len(), err)
	}
	for round := range 2 {
		for i := range n {
			var regs Regs
			regs.Set(7, 0x7000)
			pc := 0x1010 + 0x100*uint64(i)
			_, ret, _, _, err := tab.Step(pc, &regs, stackMem(0x7000, 0x4242))
			if err != nil || ret != 0x4242 {
				t.Fatalf("round %d, FDE %d: return %#x, %v", round, i, ret, err)
			}
		}
	}
	if tab.initials != maxInitials {
		t.Errorf("%d initial rows kept, want %d", tab.initials, maxInitials)
	}
}

// TestGoStep: Go code with no entry is unwound by its SP delta: the
// return address delta above the stack pointer, the saved frame pointer
// below it, the work of the lookup charged.
func TestGoStep(t *testing.T) {
	tab, err := New("go.bin", X86_64, binary.LittleEndian, 8)
	if err != nil {
		t.Fatal(err)
	}
	tab.goSP = func(addr uint64) (int64, int, bool) {
		if addr >= 0x401000 && addr < 0x402000 {
			return 16, 3, true
		}
		return 0, 1, false
	}
	var regs Regs
	regs.Set(7, 0x7000)
	regs.Set(6, 0x1)
	// sp+8: the saved frame pointer; sp+16: the return address.
	mem := stackMem(0x7000, 0, 0x7100, 0x401800, 0x9999)
	find := func(pc uint64) (*Table, uint64, bool) { return tab, 0, true }
	work := int64(100)
	rets, err := Unwind(X86_64, regs, 0x401010, mem, find, 1, &work)
	if err != nil || !slices.Equal(rets, []uint64{0x401800}) || work != 100-12 {
		t.Errorf("Unwind: %#x, %v, work left %d; want [0x401800], 88", rets, err, work)
	}
	caller, ret, err := tab.goStep(0x401010, true, &regs, mem, nil)
	if sp, _ := caller.Get(7); err != nil || ret != 0x401800 || sp != 0x7018 {
		t.Errorf("goStep: return %#x, sp %#x, %v", ret, sp, err)
	}
	if fp, _ := caller.Get(6); fp != 0x7100 {
		t.Errorf("goStep: frame pointer %#x, want the saved 0x7100", fp)
	}
}

// FuzzOpenELF: no ELF file makes OpenELF, or stepping with what it
// read, panic or hang; seeded with the JIT objects of
// testdata/mcjit/golden (relocatable: their .eh_frame relocated), its
// host binary and an AArch64 object of package jitsym's test data.
func FuzzOpenELF(f *testing.F) {
	golden := filepath.Join("..", "..", "testdata", "mcjit", "golden")
	seeds, _ := filepath.Glob(filepath.Join(golden, "jit", "*.elf"))
	seeds = append(seeds, filepath.Join(golden, "bin", "libleaf.so"),
		filepath.Join("..", "jitsym", "testdata", "plain-clang-aarch64-dwarf4.o"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b, uint64(0x4ffffffffac8))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		ef, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "f.elf")
		if err != nil {
			return
		}
		cf, _ := OpenELF(ef)
		if cf == nil {
			return
		}
		var regs Regs
		for i := range MaxRegs {
			regs.Set(i, 0x7000+uint64(i)*8)
		}
		mem := func(a uint64) (uint64, bool) { return a ^ 0x55, a&7 == 0 }
		work := int64(1 << 16)
		// The file's machine: AArch64 files step by x30 and, Go's, by
		// goStep's arm64 rules.
		Unwind(cf.arch, regs, pc, mem, func(uint64) (*Table, uint64, bool) { return cf.Table, 0, true }, 64, &work)
	})
}

// TestPoppedRegister: at the return of a function whose table still says
// rbp is saved below the CFA after rbp was popped (V8's epilogues), the
// saved slot lies below the stack pointer, outside any stack copy: rbp
// is the caller's already, and the caller's frame, based on rbp, is
// unwound on.
func TestPoppedRegister(t *testing.T) {
	cieInstr := []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}
	// callee [0x1000, 0x1020): push rbp at 0, mov rbp, rsp at 1; pop rbp
	// at 0x10 leaves CFA rsp+8 with rbp's rule unchanged; ret at 0x11.
	callee := []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 6, 2, cfaAdvanceLoc | 3, cfaDefCFARegister, 6,
		cfaAdvanceLoc | 0xd, cfaDefCFA, 7, 8}
	// caller [0x2000, 0x2100): runs on rbp.
	caller := []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 6, 2, cfaAdvanceLoc | 3, cfaDefCFARegister, 6}
	data := ehFrame(-8, 16, cieInstr, testFDE{0x1000, 0x20, callee}, testFDE{0x2000, 0x100, caller})
	tab, err := New("v8.o", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	// At the ret: rsp 0x7000 holds the return address into the caller;
	// rbp is the caller's frame, 0x7040: its saved rbp and return
	// address above it. The copy starts at rsp.
	var regs Regs
	regs.Set(7, 0x7000)
	regs.Set(6, 0x7040)
	mem := stackMem(0x7000, 0x2050, 0, 0, 0, 0, 0, 0, 0, 0x7100, 0x3010)
	find := func(pc uint64) (*Table, uint64, bool) { return tab, 0, pc < 0x3000 }
	work := int64(1 << 20)
	rets, err := Unwind(X86_64, regs, 0x1011, mem, find, 8, &work)
	if !slices.Equal(rets, []uint64{0x2050, 0x3010}) {
		t.Errorf("return addresses %#x, %v; want the caller's and its caller's", rets, err)
	}
}

// TestForCode: a JIT's .eh_frame with PC-relative entries (as LLVM and
// V8 write them) is placed where the jitdump says it was, if it says
// (LLVM's ORC: one table for an object's functions, which come in any
// order after it), each entry at its function; else its first entry is
// moved to the code it came with (V8: one table per piece of code).
func TestForCode(t *testing.T) {
	le := binary.LittleEndian
	const at = 0x7f0000003000 // where the .eh_frame was
	funcs := []struct{ lo, size uint64 }{{0x7f0000001000, 0x40}, {0x7f0000002000, 0x80}}
	var eh []byte
	entry := func(body []byte) {
		for (len(body)+4)%8 != 0 {
			body = append(body, cfaNop)
		}
		eh = le.AppendUint32(eh, uint32(len(body)))
		eh = append(eh, body...)
	}
	entry([]byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, pePCRel | peSdata4, cfaDefCFA, 7, 8, cfaOffset | 16, 1})
	for _, f := range funcs {
		body := le.AppendUint32(nil, uint32(len(eh)+4)) // back to the CIE at 0
		pc := at + uint64(len(eh)) + 8                  // where pc_begin is
		body = le.AppendUint32(body, uint32(int32(int64(f.lo-pc))))
		body = le.AppendUint32(body, uint32(f.size))
		entry(append(body, 0))
	}
	eh = le.AppendUint32(eh, 0)

	// Placed at its address: both functions, whichever code it came with.
	tab, bias, err := ForCode("orc", X86_64, le, eh, at, funcs[1].lo)
	if err != nil || tab == nil || bias != 0 {
		t.Fatalf("ForCode at %#x: %v, bias %#x, %v", uint64(at), tab, bias, err)
	}
	for _, f := range funcs {
		for _, pc := range []uint64{f.lo, f.lo + f.size - 1} {
			var regs Regs
			regs.Set(7, 0x7000) // rsp
			_, ret, _, _, err := tab.Step(pc-bias, &regs, stackMem(0x7000, 0x1234))
			if err != nil || ret != 0x1234 {
				t.Errorf("at %#x: return address %#x, %v", pc, ret, err)
			}
		}
	}
	if _, ok := tab.find(funcs[1].lo + funcs[1].size); ok {
		t.Errorf("an entry past the last function")
	}

	// Address unknown: the first entry is the code's.
	tab, bias, err = ForCode("v8", X86_64, le, eh, 0, 0x5000)
	if err != nil || tab == nil {
		t.Fatalf("ForCode: %v, %v", tab, err)
	}
	if f, ok := tab.find(0x5000 - bias); !ok || f.lo+bias != 0x5000 || f.hi-f.lo != funcs[0].size {
		t.Errorf("first entry not at the code: %+v, bias %#x", f, bias)
	}
}
