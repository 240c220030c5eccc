package jitsym

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// enumMethodObject returns a JIT object shaped as rustc (LLVM) writes a
// Rust enum's methods: the declarations are children of the
// DW_TAG_enumeration_type, after its enumerators, with no DW_AT_sibling;
// the function at addr (0x100 bytes) has two inlined instances whose
// abstract origins come after it in the unit and name the declarations
// through DW_AT_specification. One declaration has a linkage name, the
// other only a name.
func enumMethodObject(addr uint64) []byte {
	le := binary.LittleEndian
	const (
		tagCU, tagNS, tagEnum, tagEnumerator = 0x11, 0x39, 0x04, 0x28
		tagSub, tagInl                       = 0x2e, 0x1d
		atName, atLow, atHigh, atConst       = 0x03, 0x11, 0x12, 0x1c
		atLink, atDeclLine, atDecl, atInline = 0x6e, 0x3b, 0x3c, 0x20
		atOrigin, atSpec                     = 0x31, 0x47
		formAddr, formData1, formData8       = 0x01, 0x0b, 0x07
		formString, formRef4, formPresent    = 0x08, 0x13, 0x19
		yes, no                              = 1, 0
	)
	abbrev := []byte{
		1, tagCU, yes, atName, formString, atLow, formAddr, atHigh, formData8, 0, 0,
		2, tagNS, yes, atName, formString, 0, 0,
		3, tagEnum, yes, atName, formString, 0, 0,
		4, tagEnumerator, no, atName, formString, atConst, formData1, 0, 0,
		5, tagSub, no, atLink, formString, atName, formString, atDeclLine, formData1, atDecl, formPresent, 0, 0,
		6, tagSub, no, atName, formString, atDeclLine, formData1, atDecl, formPresent, 0, 0,
		7, tagSub, yes, atName, formString, atLow, formAddr, atHigh, formData8, 0, 0,
		8, tagInl, no, atOrigin, formRef4, atLow, formAddr, atHigh, formData8, 0, 0,
		9, tagSub, no, atSpec, formRef4, atInline, formData1, 0, 0,
		0,
	}
	const hdr = 11 // unitObject's unit header: offsets count from before it
	var dies []byte
	off := func() uint32 { return uint32(hdr + len(dies)) }
	str := func(s string) { dies = append(append(dies, s...), 0) }
	span := func(lo, size uint64) { dies = le.AppendUint64(le.AppendUint64(dies, lo), size) }
	var patch []int // where the two abstract origins' offsets go
	dies = append(dies, 1)
	str("lib.rs")
	span(addr, 0x100)
	dies = append(dies, 2)
	str("core")
	dies = append(dies, 2)
	str("cmp")
	dies = append(dies, 3)
	str("Ordering")
	for i, e := range []string{"Less", "Equal", "Greater"} {
		dies = append(dies, 4)
		str(e)
		dies = append(dies, byte(i))
	}
	thenWith := off()
	dies = append(dies, 5)
	str("_ZN4core3cmp8Ordering9then_with17h1f6b3e6e4cbc4ff3E")
	str("then_with<F>")
	dies = append(dies, 52) // decl_line
	isEq := off()
	dies = append(dies, 6)
	str("is_eq")
	dies = append(dies, 77)
	dies = append(dies, 0, 0, 0) // Ordering's, cmp's and core's children end
	dies = append(dies, 7)
	str("rank")
	span(addr, 0x100)
	for _, lo := range []uint64{0x10, 0x20} {
		dies = append(dies, 8)
		patch = append(patch, len(dies))
		dies = le.AppendUint32(dies, 0)
		span(addr+lo, 0x10)
	}
	dies = append(dies, 0) // rank's children end
	for i, decl := range []uint32{thenWith, isEq} {
		le.PutUint32(dies[patch[i]:], off())
		dies = append(dies, 9)
		dies = le.AppendUint32(dies, decl)
		dies = append(dies, 1) // DW_INL_inlined
	}
	dies = append(dies, 0) // the unit's children end
	return unitObject(addr, abbrev, dies)
}

// TestMethodDeclaredInEnum: an inlined function whose declaration is a
// child of an enumeration type, as rustc declares an enum's methods, is
// named from that declaration as llvm-symbolizer names it (linkage name,
// declaration line), and one with only a DW_AT_name is qualified with the
// enum and its namespaces. The walk used to jump over an enum's children
// and named such frames "".
func TestMethodDeclaredInEnum(t *testing.T) {
	const addr = 0x7f0000002000
	data := enumMethodObject(addr)
	f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "enum.o")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr uint64
		want []Frame
	}{
		{addr + 0x14, []Frame{
			{Func: "_ZN4core3cmp8Ordering9then_with17h1f6b3e6e4cbc4ff3E", StartLine: 52},
			{Func: "rank"},
		}},
		{addr + 0x24, []Frame{
			{Func: "core::cmp::Ordering::is_eq", StartLine: 77},
			{Func: "rank"},
		}},
		{addr + 0x34, []Frame{{Func: "rank"}}},
	} {
		got, err := s.SourceLine(tt.addr)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SourceLine(%#x) = %+v, %v; want %+v", tt.addr, got, err, tt.want)
		}
	}
	if w := s.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
}
