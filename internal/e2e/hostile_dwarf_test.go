package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// Hostile JIT objects whose damage is in their DWARF rather than in their
// headers, and .meta files that are large rather than broken: the
// reproductions of what once cost hundreds of megabytes to gigabytes
// (100,000 nested inlined subroutines, a 16 MB line program of one byte
// per row, three large .meta files read at once).

// hostileText is where the generated objects' code is loaded: an address
// no mapping of the MCJIT profile covers, given one sample by
// withSampleAt.
const hostileText = 0x600000001000

// dwarfObject lays out a relocatable object with an executable .text of
// textSize bytes at hostileText and the given DWARF sections.
func dwarfObject(textSize int, abbrev, info, line []byte) []byte {
	return elftest.File{Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: hostileText, Data: bytes.Repeat([]byte{0xc3}, textSize)},
		{Name: ".debug_abbrev", Type: elf.SHT_PROGBITS, Data: abbrev},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: info},
		{Name: ".debug_line", Type: elf.SHT_PROGBITS, Data: line},
	}}.Bytes()
}

// DWARF 4 encodings used below.
const (
	tagCompileUnit = 0x11
	tagSubprogram  = 0x2e
	tagInlined     = 0x1d
	atName         = 0x03
	atStmtList     = 0x10
	atLowPC        = 0x11
	atHighPC       = 0x12
	atOrigin       = 0x31
	atCallFile     = 0x58
	atCallLine     = 0x59
	formAddr       = 0x01
	formData4      = 0x06
	formString     = 0x08
	formData1      = 0x0b
	formRef4       = 0x13
	formSecOffset  = 0x17
)

// hostileAbbrevs: 1 compile unit, 2 subprogram, 3 inlined subroutine, all
// with children; 4 an abstract subprogram (a name, no code).
var hostileAbbrevs = []byte{
	1, tagCompileUnit, 1, atName, formString, atStmtList, formSecOffset, atLowPC, formAddr, atHighPC, formData4, 0, 0,
	2, tagSubprogram, 1, atName, formString, atLowPC, formAddr, atHighPC, formData4, 0, 0,
	3, tagInlined, 1, atOrigin, formRef4, atLowPC, formAddr, atHighPC, formData4, atCallFile, formData1, atCallLine, formData4, 0, 0,
	4, tagSubprogram, 0, atName, formString, 0, 0,
	0,
}

// hostileInfo returns a .debug_info of one compile unit over
// [hostileText, +size) holding function f with depth inlined subroutines
// nested in each other, all over the same bytes, each of its own function
// g0, g1, ...
func hostileInfo(size uint32, depth int) []byte {
	bo := binary.LittleEndian
	var b []byte
	b = bo.AppendUint32(b, 0) // unit_length, set below
	b = bo.AppendUint16(b, 4)
	b = bo.AppendUint32(b, 0) // .debug_abbrev offset
	b = append(b, 8)
	b = append(b, 1)
	b = append(b, "hostile.c\x00"...)
	b = bo.AppendUint32(b, 0) // stmt_list
	b = bo.AppendUint64(b, hostileText)
	b = bo.AppendUint32(b, size)
	origins := make([]uint32, depth)
	for i := range depth {
		origins[i] = uint32(len(b))
		b = append(b, 4)
		b = append(b, fmt.Sprintf("g%d\x00", i)...)
	}
	b = append(b, 2)
	b = append(b, "f\x00"...)
	b = bo.AppendUint64(b, hostileText)
	b = bo.AppendUint32(b, size)
	for i := range depth {
		b = append(b, 3)
		b = bo.AppendUint32(b, origins[i])
		b = bo.AppendUint64(b, hostileText)
		b = bo.AppendUint32(b, size)
		b = append(b, 1)
		b = bo.AppendUint32(b, uint32(i+1))
	}
	b = append(b, make([]byte, depth+2)...) // ends the children of each
	bo.PutUint32(b, uint32(len(b)-4))
	return b
}

// hostileLine returns a DWARF 4 line program for hostile.c starting at
// hostileText, with rows rows of one byte each (a special opcode that
// advances the address by addrStep and the line by one).
func hostileLine(rows, addrStep int) []byte {
	const lineBase, lineRange, opcodeBase = -5, 14, 13
	bo := binary.LittleEndian
	var hdr []byte
	hdr = append(hdr, 1, 1, 1, byte(lineBase&0xff), lineRange, opcodeBase)
	hdr = append(hdr, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1) // standard_opcode_lengths
	hdr = append(hdr, 0)                                  // no include directories
	hdr = append(hdr, "hostile.c\x00"...)
	hdr = append(hdr, 0, 0, 0, 0) // dir, mtime, length; end of file names
	var prog []byte
	prog = append(prog, 0, 9, 2) // DW_LNE_set_address
	prog = bo.AppendUint64(prog, hostileText)
	special := byte((1 - lineBase) + lineRange*addrStep + opcodeBase)
	prog = append(prog, bytes.Repeat([]byte{special}, rows)...)
	prog = append(prog, 2, 16)   // DW_LNS_advance_pc 16
	prog = append(prog, 0, 1, 1) // DW_LNE_end_sequence
	var b []byte
	b = bo.AppendUint32(b, uint32(2+4+len(hdr)+len(prog)))
	b = bo.AppendUint16(b, 4)
	b = bo.AppendUint32(b, uint32(len(hdr)))
	b = append(b, hdr...)
	return append(b, prog...)
}

// deepInlineObject is 100,000 nested inlined subroutines over 16 bytes.
func deepInlineObject(depth int) []byte {
	return dwarfObject(16, hostileAbbrevs, hostileInfo(16, depth), hostileLine(1, 0))
}

// denseLineObject is a line program of rows one-byte rows, one per byte
// of a .text of rows bytes.
func denseLineObject(rows int) []byte {
	return dwarfObject(rows+16, hostileAbbrevs, hostileInfo(uint32(rows+16), 0), hostileLine(rows, 1))
}

// withSampleAt returns the legacy (gperftools) CPU profile data with one
// more sample, of one count, whose stack is addr alone. The profile stays
// in its format, /proc/self/maps text included, which the JIT stage reads.
func withSampleAt(t *testing.T, data []byte, addr uint64) []byte {
	bo := binary.LittleEndian
	word := func(i int) uint64 { return bo.Uint64(data[8*i:]) }
	if len(data) < 8*5 || word(0) != 0 || word(1) != 3 {
		t.Fatal("not a 64-bit little-endian legacy CPU profile")
	}
	// Header: 0, 3, 0, period, 0. Records: count, depth, depth PCs,
	// until the trailer 0, 1, 0.
	i := int(word(2)) + 2
	for 8*(i+2) < len(data) && !(word(i) == 0 && word(i+1) == 1 && word(i+2) == 0) {
		i += 2 + int(word(i+1))
	}
	if 8*(i+2) >= len(data) {
		t.Fatal("no trailer in the legacy CPU profile")
	}
	out := slices.Clone(data[:8*i])
	out = bo.AppendUint64(out, 1)
	out = bo.AppendUint64(out, 1)
	out = bo.AppendUint64(out, addr)
	return append(out, data[8*i:]...)
}

// dwarfCases are the hostile corpus's cases of this file, each of which
// must say what it left out. Those of a generated object have a sample at
// hostileText (see withSampleAt), so that its DWARF is indexed; the .meta
// case writes three copies of the real object elfData, each with a large
// .meta file of unloaded sections that omits its code.
func dwarfCases(elfData []byte) []hostileCase {
	writeBytes := func(b []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	bigMeta := func(n int) []byte { // n bytes of unloaded sections
		const entry = `{"name":"a","start":0,"size":1},`
		return []byte(`{"sections":[` + strings.Repeat(entry, n/len(entry)) + `{"name":"a","start":0,"size":1}]}`)
	}
	return []hostileCase{
		{name: "elf with 100000 nested inlined subroutines", file: "evil.elf", sample: true,
			write: writeBytes(deepInlineObject(100000)), wantErr: "subroutine entries nested deeper than 256 were left out",
			maxRSS: 128 << 20}, // 250 MB before the cap on inline depth
		{name: "elf with a 16 MB line program of one-byte rows", file: "evil.elf", sample: true,
			write: writeBytes(denseLineObject(16 << 20)), wantErr: "more than one line table row per 2 bytes of .debug_line"},
		{name: "three 40 MB .meta files", file: "m1.meta", write: func(t *testing.T, path string) {
			m := bigMeta(40 << 20)
			for _, stem := range []string{"m1", "m2", "m3"} {
				writeBytes(elfData)(t, filepath.Join(filepath.Dir(path), stem+".elf"))
				writeBytes(m)(t, filepath.Join(filepath.Dir(path), stem+".meta"))
			}
		}, wantErr: "m1.meta: lists more than 64 sections",
			maxRSS: 128 << 20}, // 360 MB when the entries were collected before being checked
	}
}
