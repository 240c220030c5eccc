package jitsnap

import "testing"

// TestRegionContaining is a boundary table over two adjacent readable
// mappings [0x1000, 0x2000) [0x2000, 0x3000), a gap, an unreadable
// [0x4000, 0x5000) and a readable [0x5000, 0x6000).
func TestRegionContaining(t *testing.T) {
	maps := []Mapping{
		{Start: 0x1000, Limit: 0x2000, Perms: "r--p"},
		{Start: 0x2000, Limit: 0x3000, Perms: "rw-p"},
		{Start: 0x4000, Limit: 0x5000, Perms: "---p"},
		{Start: 0x5000, Limit: 0x6000, Perms: "r-xp"},
	}
	for _, tt := range []struct {
		name       string
		addr, size uint64
		wantOK     bool
		wantHi     uint64
	}{
		{name: "below", addr: 0x800, size: 0x10},
		{name: "at start", addr: 0x1000, size: 0x10, wantOK: true, wantHi: 0x2000},
		{name: "inside", addr: 0x1800, size: 0x10, wantOK: true, wantHi: 0x2000},
		{name: "ends at end", addr: 0x1ff0, size: 0x10, wantOK: true, wantHi: 0x2000},
		{name: "spans adjacent mappings", addr: 0x1ff0, size: 0x20, wantOK: true, wantHi: 0x3000},
		{name: "last byte", addr: 0x2fff, size: 1, wantOK: true, wantHi: 0x3000},
		{name: "runs into the gap", addr: 0x2ff0, size: 0x20, wantHi: 0x3000},
		{name: "at end", addr: 0x3000, size: 1},
		{name: "unreadable", addr: 0x4000, size: 1},
		{name: "readable after unreadable", addr: 0x5000, size: 0x1000, wantOK: true, wantHi: 0x6000},
		{name: "above", addr: 0x6000, size: 1},
		{name: "wraps", addr: 0x1000, size: ^uint64(0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, hi, ok := regionContaining(maps, tt.addr, tt.size)
			if ok != tt.wantOK || hi != tt.wantHi {
				t.Errorf("regionContaining(%#x, %#x): got hi %#x ok %v, want hi %#x ok %v", tt.addr, tt.size, hi, ok, tt.wantHi, tt.wantOK)
			}
		})
	}
}
