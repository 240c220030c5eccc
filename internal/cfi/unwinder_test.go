package cfi

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// TestCompiledSameAsRow: at the addresses of every entry of real
// binaries (those TestSameRowsAsReadelf checks against readelf), the
// compiled rule unwinds a frame to the same caller's registers, return
// address and error as the row it was compiled from, applied by the
// general path, in frames of several kinds: every register known and
// the stack readable; the stack readable only well above the stack
// pointer (saved registers lost, return addresses too); only the stack
// pointer, the frame pointer and the pc known (CFAs based on other
// registers fail); the stack pointer above the CFA (saved slots below
// it, popped).
func TestCompiledSameAsRow(t *testing.T) {
	var files []string
	for _, f := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"} {
		if _, err := os.Stat(f); err == nil && !testing.Short() {
			files = append(files, f)
		}
	}
	files = append(files, buildWorkload(t, t.TempDir())...)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cf, _ := openELF(t, file)
			addrs, fast, slow := 0, 0, 0
			rules := map[compiled]bool{}
			for i := range cf.fdes {
				f := &cf.fdes[i]
				// Every address of small entries, 64 spread over
				// larger ones and their last.
				stride := max((f.hi-f.lo)/64, 1)
				for addr := f.lo; addr < f.hi; addr = min(addr+stride, max(addr+1, f.hi-1)) {
					var rw row
					if err := cf.rowAt(f, addr, &rw); err != nil {
						t.Fatalf("row at %#x: %v", addr, err)
					}
					c := cf.compile(&rw)
					addrs++
					if c.kind != kindFast {
						slow++
						continue
					}
					fast++
					rules[c] = true
					for _, fr := range testFrames(cf.arch) {
						var want Regs
						wr, ws, we, werr := cf.applyRow(&rw, addr, &fr.regs, &want, &fr.mem)
						got := fr.regs
						gr, gs, ge, gerr := cf.applyFast(&c, addr, &got, &fr.mem)
						if gr != wr || gs != ws || ge != we || !sameError(gerr, werr) || (werr == nil && !we && !sameRegs(got, want)) {
							t.Fatalf("at %#x, %s: compiled: %#x %v %v %v %+v; row: %#x %v %v %v %+v",
								addr, fr.name, gr, gs, ge, gerr, got, wr, ws, we, werr, want)
						}
					}
				}
			}
			// The general rows are those of the PLT (a CFA expression)
			// and of signal frames.
			if fast*100 < addrs*85 {
				t.Errorf("%d of %d addresses have a fast rule", fast, addrs)
			}
			t.Logf("%d addresses: %d with a fast rule (%d distinct), the same as their rows; %d rows of the general kind", addrs, fast, len(rules), slow)
		})
	}
}

// A testFrame is a callee's registers and memory.
type testFrame struct {
	name string
	regs Regs
	mem  memory
}

// testFrames are the frames TestCompiledSameAsRow unwinds.
func testFrames(arch *Arch) []testFrame {
	const sp = 0x7ff0_0000
	word := func(a uint64) uint64 { return a*0x9e3779b97f4a7c15 | 1 }
	var all, few, high Regs
	for i := range MaxRegs {
		all.Set(i, sp+0x100+uint64(i)*0x10)
	}
	all.Set(arch.SP, sp)
	high = all
	high.Set(arch.SP, sp+0x40)
	few.Set(arch.SP, sp)
	few.Set(arch.FP, sp+0x80)
	if arch.PC >= 0 {
		few.Set(arch.PC, 0x1234)
	}
	return []testFrame{
		{"all known", all, memory{fn: func(a uint64) (uint64, bool) { return word(a), a >= sp-0x100 && a < sp+0x1000 }}},
		{"stack cut", all, memory{fn: func(a uint64) (uint64, bool) { return word(a), a >= sp+0x18 && a < sp+0x1000 }}},
		{"few known", few, memory{fn: func(a uint64) (uint64, bool) { return word(a), a >= sp && a < sp+0x1000 }}},
		{"sp above", high, memory{fn: func(a uint64) (uint64, bool) { return word(a), a < sp+0x1000 }}},
	}
}

// sameError reports whether a and b are both nil or both errors with
// the same message.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// sameRegs reports whether a and b know the same registers, with the
// same values.
func sameRegs(a, b Regs) bool {
	if a.known != b.known {
		return false
	}
	for i := range MaxRegs {
		if a.known&(1<<i) != 0 && a.val[i] != b.val[i] {
			return false
		}
	}
	return true
}

// recursion returns a table of two functions and a stack copy with a
// regs whose innermost frame is in the first, leaf [0x2000, 0x2040)
// (CFA rsp+8), which rec [0x1000, 0x1100) called, which calls itself
// at 0x104b (CFA rsp+32 there, rbx saved at CFA-16) depth times, rec
// called from top [0x3000, 0x3100), the outermost. It returns the pc
// and the return addresses Unwind must give.
func recursion(t testing.TB, depth int) (tab *Table, regs Regs, pc uint64, stack Stack, want []uint64) {
	cieInstr := []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}
	data := ehFrame(-8, 16, cieInstr,
		testFDE{0x1000, 0x100, []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 3, 2, cfaAdvanceLoc | 4, cfaDefCFAOffset, 32}},
		testFDE{0x2000, 0x40, nil},
		testFDE{0x3000, 0x100, []byte{cfaUndefined, 16}},
	)
	tab, err := New("rec.o", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	const sp = 0x7ff0_0000
	le := binary.LittleEndian
	b := le.AppendUint64(nil, 0x1050) // leaf's return address into rec
	want = append(want, 0x1050)
	for i := range depth {
		ret := uint64(0x1050)
		if i == depth-1 {
			ret = 0x3020 // into top
		}
		b = le.AppendUint64(b, 0)         // rec's local
		b = le.AppendUint64(b, uint64(i)) // rec's caller's rbx
		b = le.AppendUint64(b, 0)         // rec's pushed
		b = le.AppendUint64(b, ret)       // its return address
		want = append(want, ret)
	}
	regs.Set(7, sp)
	regs.Set(3, 0x42)
	return tab, regs, 0x2010, Stack{Addr: sp, Data: b}, want
}

// TestUnwinderRecursion: an Unwinder unwinds a deep recursion to the
// outermost frame, the same again with what it kept, as Unwind does,
// and without allocating once it has met the stack's pcs.
func TestUnwinderRecursion(t *testing.T) {
	tab, regs, pc, stack, want := recursion(t, 200)
	find := func(pc uint64) (*Table, uint64, bool) { return tab, 0, true }
	u := NewUnwinder(X86_64, find)
	for round := range 2 {
		got, err := u.Unwind(nil, &regs, pc, stack, 512, nil)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("round %d: %d addresses, %v; want %d", round, len(got), err, len(want))
		}
	}
	mem := func(a uint64) (uint64, bool) {
		var m = memory{stack: stack}
		return m.read(a)
	}
	if got, err := Unwind(X86_64, regs, pc, mem, find, 512, nil); err != nil || !slices.Equal(got, want) {
		t.Errorf("Unwind: %d addresses, %v; want %d", len(got), err, len(want))
	}
	// A stack copy cut in a frame: the return addresses before it.
	cut := stack
	cut.Data = cut.Data[:8+32*10+24]
	if got, err := u.Unwind(nil, &regs, pc, cut, 512, nil); !errors.Is(err, ErrMemory) || !slices.Equal(got, want[:11]) {
		t.Errorf("cut stack: %d addresses, %v; want %d and ErrMemory", len(got), err, 11)
	}
	dst := make([]uint64, 0, 512)
	if n := testing.AllocsPerRun(100, func() {
		work := int64(1 << 30)
		dst, _ = u.Unwind(dst[:0], &regs, pc, stack, 512, &work)
	}); n != 0 {
		t.Errorf("%v allocations per Unwind, want 0", n)
	}
}

// BenchmarkUnwinder unwinds a recursion 200 calls deep, its pcs met:
// the cost of a frame, of which most of a profile's are.
func BenchmarkUnwinder(b *testing.B) {
	tab, regs, pc, stack, want := recursion(b, 200)
	u := NewUnwinder(X86_64, func(pc uint64) (*Table, uint64, bool) { return tab, 0, true })
	dst := make([]uint64, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		work := int64(1 << 30)
		dst, _ = u.Unwind(dst[:0], &regs, pc, stack, 512, &work)
	}
	if len(dst) != len(want) {
		b.Fatalf("%d addresses, want %d", len(dst), len(want))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(want)), "ns/frame")
}

// BenchmarkRule computes the rules of libc's addresses, one in 16 of
// each entry, as an Unwinder does for a pc it meets the first time: the
// entry found, its instructions run to the address, the row compiled
// and kept (the rules kept are forgotten each time).
func BenchmarkRule(b *testing.B) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		b.Skip(err)
	}
	ef, err := elfrel.Open(libc)
	if err != nil {
		b.Fatal(err)
	}
	defer ef.Close()
	cf, err := OpenELF(ef)
	if err != nil {
		b.Fatal(err)
	}
	var addrs []uint64
	for _, f := range cf.fdes {
		for a := f.lo; a < f.hi; a += 16 {
			addrs = append(addrs, a)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		cf.rules = nil
		for _, a := range addrs {
			if c := cf.rule(a); c.kind == kindErr {
				b.Fatalf("at %#x: %v", a, c.err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(addrs)), "ns/rule")
}

// FuzzUnwinderStack: no table and stack copy make an Unwinder panic,
// and it unwinds a stack copy as Unwind does the same memory read
// through a function, twice (the second time with what it kept).
func FuzzUnwinderStack(f *testing.F) {
	tab, _, _, stack, _ := recursion(f, 3)
	f.Add(tab.fdes[0].cie.instr, tab.fdes[0].instr, stack.Data, uint64(0x2010))
	f.Fuzz(func(t *testing.T, cieInstr, instr, data []byte, pc uint64) {
		eh := ehFrame(-8, 16, cieInstr, testFDE{0x1000, 0x100, instr}, testFDE{0x2000, 0x40, nil})
		tab, _ := New("f.so", X86_64, binary.LittleEndian, 8, Section{Name: ".eh_frame", Data: eh})
		find := func(uint64) (*Table, uint64, bool) { return tab, 0, true }
		var regs Regs
		for i := range 17 {
			regs.Set(i, 0x7000+uint64(i)*8)
		}
		st := Stack{Addr: 0x7000, Data: data}
		mem := func(a uint64) (uint64, bool) {
			m := memory{stack: st}
			return m.read(a)
		}
		work := int64(1 << 16)
		want, werr := Unwind(X86_64, regs, pc, mem, find, 64, &work)
		u := NewUnwinder(X86_64, find)
		for round := range 2 {
			work := int64(1 << 16)
			got, err := u.Unwind(nil, &regs, pc, st, 64, &work)
			if !slices.Equal(got, want) || !sameError(err, werr) {
				t.Fatalf("round %d: %#x, %v; Unwind: %#x, %v", round, got, err, want, werr)
			}
		}
	})
}
