package jitsym

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// mapSections is a Sections over sections in memory.
type mapSections map[string][]byte

func (m mapSections) Size(name string) uint64             { return uint64(len(m[name])) }
func (m mapSections) Section(name string) ([]byte, error) { return m[name], nil }

// TestNewFromSectionsSymbols checks the symbol index built from another
// container's symbols: unordered, sized or not, several at an address.
func TestNewFromSectionsSymbols(t *testing.T) {
	s, err := NewFromSections("x.exe", binary.LittleEndian, nil, []Sym{
		{Name: "c", Addr: 0x300},
		{Name: "a", Addr: 0x100, Size: 0x10},
		{Name: "b", Addr: 0x200, File: "b.c"},
		{Name: "a_big", Addr: 0x100, Size: 0x20},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.HasDWARF() {
		t.Error("HasDWARF() = true, want false")
	}
	tests := []struct {
		addr     uint64
		wantFunc string
		wantFile string
	}{
		{addr: 0xff},
		{addr: 0x100, wantFunc: "a_big"},
		{addr: 0x11f, wantFunc: "a_big"},
		{addr: 0x120},
		{addr: 0x200, wantFunc: "b", wantFile: "b.c"},
		{addr: 0x2ff, wantFunc: "b", wantFile: "b.c"},
		{addr: 0x300, wantFunc: "c"},
		{addr: 0x1000000, wantFunc: "c"},
	}
	for _, tt := range tests {
		frames, err := s.SourceLine(tt.addr)
		if err != nil {
			t.Fatalf("SourceLine(%#x): %v", tt.addr, err)
		}
		var fn, file string
		if len(frames) > 0 {
			fn, file = frames[0].Func, frames[0].File
		}
		if fn != tt.wantFunc || file != tt.wantFile {
			t.Errorf("SourceLine(%#x) = %+v, want function %q, file %q", tt.addr, frames, tt.wantFunc, tt.wantFile)
		}
	}
}

// TestNewFromSectionsBadDWARF checks that broken DWARF from another
// container is an error naming the file, not a panic.
func TestNewFromSectionsBadDWARF(t *testing.T) {
	tests := []struct {
		name     string
		sections mapSections
	}{
		{name: "truncated unit", sections: mapSections{".debug_info": {0x20, 0, 0, 0, 5, 0}}},
		{name: "bad address size", sections: mapSections{".debug_info": {0x08, 0, 0, 0, 5, 0, 1, 3, 0, 0, 0, 0}}},
		{name: "no abbreviations", sections: mapSections{".debug_info": {0x08, 0, 0, 0, 5, 0, 1, 4, 0, 0, 0, 0}}},
	}
	for _, tt := range tests {
		_, err := NewFromSections("x.dylib", binary.LittleEndian, tt.sections, nil)
		var fe *elfrel.FormatError
		if !errors.As(err, &fe) || fe.File != "x.dylib" {
			t.Errorf("%s: error %v, want a *elfrel.FormatError naming x.dylib", tt.name, err)
		}
	}
}
