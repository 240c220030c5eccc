package jitsym

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// deepObject returns a JIT object whose one function has n inlined
// subroutines nested in each other, all over the same 256 bytes of code
// at addr.
func deepObject(addr uint64, n int) []byte {
	le := binary.LittleEndian
	const (
		tagCU, tagSub, tagInl           = 0x11, 0x2e, 0x1d
		atName, atLow, atHigh           = 0x03, 0x11, 0x12
		formAddr, formData8, formString = 0x01, 0x07, 0x08
		childrenYes                     = 1
	)
	abbrev := []byte{
		1, tagCU, childrenYes, atName, formString, atLow, formAddr, atHigh, formData8, 0, 0,
		2, tagSub, childrenYes, atName, formString, atLow, formAddr, atHigh, formData8, 0, 0,
		3, tagInl, childrenYes, atLow, formAddr, atHigh, formData8, 0, 0,
		0,
	}
	var dies []byte
	die := func(code byte, name string) {
		dies = append(dies, code)
		if name != "" {
			dies = append(append(dies, name...), 0)
		}
		dies = le.AppendUint64(dies, addr)
		dies = le.AppendUint64(dies, 0x100)
	}
	die(1, "deep.c")
	die(2, "f")
	for range n {
		die(3, "")
	}
	dies = append(dies, make([]byte, n+2)...) // the end of each entry's children
	return unitObject(addr, abbrev, dies)
}

// unitObject returns a JIT object with 256 bytes of code at addr and one
// DWARF 4 unit (8-byte addresses) of the entries dies, abbreviated by
// abbrev. Entries refer to one another from the unit's start, which the
// 11 bytes of its header precede.
func unitObject(addr uint64, abbrev, dies []byte) []byte {
	le := binary.LittleEndian
	info := le.AppendUint32(nil, uint32(7+len(dies))) // unit_length
	info = le.AppendUint16(info, 4)                   // version
	info = le.AppendUint32(info, 0)                   // abbrev_offset
	info = append(append(info, 8), dies...)           // address_size
	f := elftest.File{Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: addr, Data: make([]byte, 0x100)},
		{Name: ".debug_abbrev", Type: elf.SHT_PROGBITS, Data: abbrev},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: info},
	}}
	return f.Bytes()
}

// TestInlineDepthCap: subroutines nested 100,000 deep (a hostile object)
// are indexed to maxInlineDepth levels, with a warning naming the file,
// in memory proportional to the file; the frames of an address stop at
// the deepest level kept.
func TestInlineDepthCap(t *testing.T) {
	const addr = 0x7f0000001000
	for _, tc := range []struct {
		depth      int
		wantFrames int
		warn       bool
	}{
		{depth: 10, wantFrames: 11},
		{depth: maxInlineDepth - 1, wantFrames: maxInlineDepth},
		{depth: 100000, wantFrames: maxInlineDepth, warn: true},
	} {
		data := deepObject(addr, tc.depth)
		path := filepath.Join(t.TempDir(), "deep.elf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := Open(path)
		if err != nil {
			t.Fatalf("depth %d: %v", tc.depth, err)
		}
		frames, err := s.SourceLine(addr + 0x10)
		runtime.ReadMemStats(&after)
		warnings := s.Warnings()
		s.Close()
		if err != nil || len(frames) != tc.wantFrames || frames[len(frames)-1].Func != "f" {
			t.Errorf("depth %d: %d frames (outermost %v), %v; want %d ending in f", tc.depth, len(frames), frames[len(frames)-1:], err, tc.wantFrames)
		}
		// Every entry below the cut counts, not only the first.
		cut := fmt.Sprintf("%d subroutine entries nested deeper than", tc.depth-(maxInlineDepth-1))
		warned := len(warnings) == 1 && strings.Contains(warnings[0], path) && strings.Contains(warnings[0], cut)
		if warned != tc.warn {
			t.Errorf("depth %d: warnings %q", tc.depth, warnings)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32*uint64(len(data))+4<<20 {
			t.Errorf("depth %d: %d bytes of DWARF allocated %d bytes", tc.depth, len(data), alloc)
		}
	}
}
