package profile

import (
	"slices"
	"strings"
	"testing"
)

func TestLookupBoundaries(t *testing.T) {
	a := &Object{Path: "/jit/a.elf", Sections: []Section{
		{Name: ".text.f", Start: 0x1000, Size: 0x100},
		{Name: ".text.g", Start: 0x3000, Size: 0x10},
	}}
	b := &Object{Path: "/jit/b.elf", Sections: []Section{
		{Name: ".text.h", Start: 0x2000, Size: 0x800},
	}}
	set, errs := NewObjectSet([]*Object{b, a})
	if len(errs) != 0 {
		t.Fatalf("NewObjectSet: unexpected errors %v", errs)
	}
	for _, tc := range []struct {
		name    string
		addr    uint64
		wantObj *Object
		wantSec string
	}{
		{name: "zero", addr: 0},
		{name: "below", addr: 0xfff},
		{name: "start", addr: 0x1000, wantObj: a, wantSec: ".text.f"},
		{name: "inside", addr: 0x1080, wantObj: a, wantSec: ".text.f"},
		{name: "end-1", addr: 0x10ff, wantObj: a, wantSec: ".text.f"},
		{name: "end", addr: 0x1100},
		{name: "gap", addr: 0x1800},
		{name: "other object", addr: 0x27ff, wantObj: b, wantSec: ".text.h"},
		{name: "last start", addr: 0x3000, wantObj: a, wantSec: ".text.g"},
		{name: "last end", addr: 0x3010},
		{name: "above", addr: ^uint64(0)},
	} {
		obj, sec := set.Lookup(tc.addr)
		if obj != tc.wantObj || sec.Name != tc.wantSec {
			t.Errorf("%s: Lookup(%#x) = %v, %q, want %v, %q", tc.name, tc.addr, pathOf(obj), sec.Name, pathOf(tc.wantObj), tc.wantSec)
		}
	}
	if got := set.Objects; len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Objects not sorted by path: %v", got)
	}
}

func pathOf(o *Object) string {
	if o == nil {
		return "<nil>"
	}
	return o.Path
}

func TestLookupNilAndEmpty(t *testing.T) {
	var nilSet *ObjectSet
	if o, _ := nilSet.Lookup(0x1000); o != nil || nilSet.Len() != 0 {
		t.Errorf("nil set: Lookup = %v, Len = %d; want nil, 0", o, nilSet.Len())
	}
	empty, errs := NewObjectSet(nil)
	if o, _ := empty.Lookup(0x1000); o != nil || len(errs) != 0 {
		t.Errorf("empty set: Lookup = %v, errs %v; want nil, none", o, errs)
	}
}

// TestHolding: the objects that hold some of the addresses, once each,
// in path order, whatever the order and repetition of the addresses.
func TestHolding(t *testing.T) {
	a := &Object{Path: "/jit/a.elf", Sections: []Section{{Name: ".text.f", Start: 0x1000, Size: 0x100}}}
	b := &Object{Path: "/jit/b.elf", Sections: []Section{{Name: ".text.h", Start: 0x2000, Size: 0x800}}}
	c := &Object{Path: "/jit/c.elf", Sections: []Section{{Name: ".text.k", Start: 0x4000, Size: 0x10}}}
	set, _ := NewObjectSet([]*Object{c, b, a})
	for _, tc := range []struct {
		addrs []uint64
		want  []*Object
	}{
		{nil, nil},
		{[]uint64{0, 0x1100, 0x3000}, nil},
		{[]uint64{0x2000, 0x1000, 0x27ff, 0x10ff}, []*Object{a, b}},
		{[]uint64{0x400f, 0x4000}, []*Object{c}},
	} {
		got := set.Holding(tc.addrs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Holding(%#x) = %v, want %v", tc.addrs, paths(got), paths(tc.want))
		}
	}
	var none *ObjectSet
	if got := none.Holding([]uint64{0x1000}); got != nil {
		t.Errorf("nil set: Holding = %v, want nil", paths(got))
	}
}

// paths returns the paths of objs.
func paths(objs []*Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Path)
	}
	return out
}

func TestOverlapRule(t *testing.T) {
	// a starts lower and wins the overlap; b keeps only its tail. c sits
	// at the same start as a but sorts after it by path, and is entirely
	// covered; d lies entirely inside b's tail.
	a := &Object{Path: "/jit/a.elf", Sections: []Section{{Name: ".text.a", Start: 0x1000, Size: 0x200}}}
	b := &Object{Path: "/jit/b.elf", Sections: []Section{{Name: ".text.b", Start: 0x1100, Size: 0x200}}}
	c := &Object{Path: "/jit/c.elf", Sections: []Section{{Name: ".text.c", Start: 0x1000, Size: 0x100}}}
	set, errs := NewObjectSet([]*Object{c, b, a})
	if len(errs) != 2 {
		t.Fatalf("got %d overlap errors %v, want 2 (a/b and a/c)", len(errs), errs)
	}
	for _, e := range errs {
		msg := e.Error()
		if !strings.Contains(msg, "overlaps section .text.a") || !strings.Contains(msg, "/jit/a.elf") {
			t.Errorf("overlap error %q does not name the winning section and object", msg)
		}
	}
	for _, tc := range []struct {
		addr uint64
		want *Object
	}{
		{addr: 0x1000, want: a},
		{addr: 0x10ff, want: a},
		{addr: 0x1100, want: a},
		{addr: 0x11ff, want: a},
		{addr: 0x1200, want: b},
		{addr: 0x12ff, want: b},
		{addr: 0x1300, want: nil},
	} {
		if got, _ := set.Lookup(tc.addr); got != tc.want {
			t.Errorf("Lookup(%#x) = %s, want %s", tc.addr, pathOf(got), pathOf(tc.want))
		}
	}

	// The rule does not depend on the order objects are given in.
	set2, _ := NewObjectSet([]*Object{a, b, c})
	for addr := uint64(0xf00); addr < 0x1400; addr += 0x10 {
		o1, s1 := set.Lookup(addr)
		o2, s2 := set2.Lookup(addr)
		if o1 != o2 || s1 != s2 {
			t.Fatalf("Lookup(%#x) depends on input order: %s %v vs %s %v", addr, pathOf(o1), s1, pathOf(o2), s2)
		}
	}
}

// TestKindRanking: of overlapping code, an LLVM dump's wins over a
// jitdump's, which wins over a perf map's, whatever the addresses; the
// kinds' sections interleave in one sorted index (Lookup is a binary
// search over it), each overlap said once per pair of objects.
func TestKindRanking(t *testing.T) {
	dump := &Object{Path: "/jit/z.elf", Kind: LLVMDump, Sections: []Section{
		{Name: ".text.a", Start: 0x1000, Size: 0x100},
		{Name: ".text.b", Start: 0x5000, Size: 0x100},
	}}
	jd := &Object{Path: "/tmp/jit-1.dump", Kind: JITDump, Sections: []Section{
		{Name: "f", Start: 0x0f80, Size: 0x100}, // under .text.a's start
		{Name: "g", Start: 0x3000, Size: 0x100},
		{Name: "h", Start: 0x7000, Size: 0x100},
	}}
	pm := &Object{Path: "/tmp/perf-1.map", Kind: PerfMap, Sections: []Section{
		{Name: "wide", Start: 0x0800, Size: 0x8000}, // over everything
		{Name: "after", Start: 0x9000, Size: 0x10},
	}}
	set, errs := NewObjectSet([]*Object{pm, jd, dump})
	if len(errs) != 3 {
		t.Errorf("got %d overlap errors, want 3 (one per pair of objects): %v", len(errs), errs)
	}
	for _, e := range errs {
		if msg := e.Error(); !strings.Contains(msg, " wins over a ") {
			t.Errorf("overlap error %q does not give the kinds' rule", msg)
		}
	}
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{0x07ff, ""},
		{0x0800, "wide"},
		{0x0f80, "f"},
		{0x0fff, "f"},
		{0x1000, ".text.a"},
		{0x10ff, ".text.a"},
		{0x1100, "wide"},
		{0x3000, "g"},
		{0x3100, "wide"},
		{0x5050, ".text.b"},
		{0x7000, "h"},
		{0x87ff, "wide"},
		{0x8800, ""},
		{0x9000, "after"},
		{0x9010, ""},
	} {
		_, sec := set.Lookup(tc.addr)
		if sec.Name != tc.want {
			t.Errorf("Lookup(%#x) = %q, want %q", tc.addr, sec.Name, tc.want)
		}
	}
	for i := 1; i < len(set.index); i++ {
		if prev, e := set.index[i-1], set.index[i]; prev.limit > e.start {
			t.Fatalf("index entries %d and %d out of order or overlapping: %+v, %+v", i-1, i, prev, e)
		}
	}
}

// TestSameCodeTwice: a runtime that writes both a jitdump and a perf map
// (V8 with --perf-prof and --perf-basic-prof, PHP's opcache.jit_debug)
// describes the same code twice: the jitdump's entry wins with nothing
// said; a perf map entry that only partly overlaps is still said.
func TestSameCodeTwice(t *testing.T) {
	jd := &Object{Path: "/tmp/jit-1.dump", Kind: JITDump, Sections: []Section{
		{Name: "f", Start: 0x1000, Size: 0x100},
		{Name: "g", Start: 0x2000, Size: 0x100},
	}}
	for _, tc := range []struct {
		name string
		pm   []Section
		errs int
	}{
		{"the same code", []Section{{Name: "f", Start: 0x1000, Size: 0x100}, {Name: "g", Start: 0x2000, Size: 0x100}, {Name: "k", Start: 0x3000, Size: 0x10}}, 0},
		{"a stale entry", []Section{{Name: "f", Start: 0x1000, Size: 0x100}, {Name: "old", Start: 0x1f80, Size: 0x100}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pm := &Object{Path: "/tmp/perf-1.map", Kind: PerfMap, Sections: tc.pm}
			set, errs := NewObjectSet([]*Object{pm, jd})
			if len(errs) != tc.errs {
				t.Errorf("%d overlap errors, want %d: %v", len(errs), tc.errs, errs)
			}
			for addr, want := range map[uint64]string{0x1000: "f", 0x2000: "g", 0x3000: "k", 0x1f80: "old"} {
				if _, sec := set.Lookup(addr); sec.Name != want && slices.ContainsFunc(tc.pm, func(s Section) bool { return s.Name == want }) {
					t.Errorf("Lookup(%#x) = %q, want %q", addr, sec.Name, want)
				}
			}
		})
	}
}
