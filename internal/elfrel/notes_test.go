package elfrel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// note encodes one ELF note with its fields padded to align bytes.
func note(typ uint32, name string, desc []byte, align int) []byte {
	pad := func(b []byte) []byte {
		for len(b)%align != 0 {
			b = append(b, 0)
		}
		return b
	}
	var out []byte
	out = binary.LittleEndian.AppendUint32(out, uint32(len(name)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(desc)))
	out = binary.LittleEndian.AppendUint32(out, typ)
	out = append(out, pad([]byte(name))...)
	return append(out, pad(append([]byte(nil), desc...))...)
}

// TestNoteBuildID: the GNU build ID among notes aligned to 4 or 8 bytes,
// past other notes; none in a truncated list or under another name; an
// error for two.
func TestNoteBuildID(t *testing.T) {
	id := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5}
	abi := note(1, "GNU\x00", []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0}, 4) // NT_GNU_ABI_TAG
	for _, c := range []struct {
		name  string
		data  []byte
		align uint64
		want  []byte
		err   error
	}{
		{"alone", note(ntGNUBuildID, "GNU\x00", id, 4), 4, id, nil},
		{"after another note", append(abi, note(ntGNUBuildID, "GNU\x00", id, 4)...), 4, id, nil},
		{"8-byte alignment", note(ntGNUBuildID, "GNU\x00", id, 8), 8, id, nil},
		{"odd alignment counts as 4", note(ntGNUBuildID, "GNU\x00", id, 4), 3, id, nil},
		{"another owner", note(ntGNUBuildID, "Go\x00\x00", id, 4), 4, nil, nil},
		{"truncated", note(ntGNUBuildID, "GNU\x00", id, 4)[:20], 4, nil, nil},
		{"two", append(note(ntGNUBuildID, "GNU\x00", id, 4), note(ntGNUBuildID, "GNU\x00", id[:4], 4)...), 4, nil, ErrMultipleBuildIDs},
	} {
		got, err := NoteBuildID(c.data, binary.LittleEndian, c.align)
		if !bytes.Equal(got, c.want) || !errors.Is(err, c.err) {
			t.Errorf("%s: NoteBuildID = %x, %v; want %x, %v", c.name, got, err, c.want, c.err)
		}
	}
}

// TestParseSupLinks: .gnu_debugaltlink and .debug_sup sections as dwz
// 0.15 writes them (the bytes readelf -x shows of its output), and
// malformed ones.
func TestParseSupLinks(t *testing.T) {
	id := []byte{0xc6, 0x35, 0x0f, 0x6d, 0x64, 0x32, 0x78, 0x00, 0xce, 0x5f}
	sum := func(name string, sup byte, cs []byte) []byte {
		out := []byte{5, 0, sup}
		out = append(append(out, name...), 0)
		out = binary.AppendUvarint(out, uint64(len(cs)))
		return append(out, cs...)
	}
	for _, c := range []struct {
		name    string
		alt     bool // .gnu_debugaltlink, else .debug_sup
		data    []byte
		wantSup bool
		want    SupLink
		wantOK  bool
	}{
		{"altlink", true, append([]byte("/tmp/dwz/common.debug\x00"), id...), false, SupLink{Name: "/tmp/dwz/common.debug", ID: id}, true},
		{"altlink, build ID with a NUL", true, append([]byte("c\x00"), 0, 1, 0), false, SupLink{Name: "c", ID: []byte{0, 1, 0}}, true},
		{"altlink without a name", true, append([]byte("\x00"), id...), false, SupLink{}, false},
		{"altlink without an ID", true, []byte("common.debug\x00"), false, SupLink{}, false},
		{"altlink without a NUL", true, []byte("common.debug"), false, SupLink{}, false},
		{"debug_sup", false, sum("c5.debug", 0, id), false, SupLink{Name: "c5.debug", ID: id, DWARF5: true}, true},
		{"debug_sup of the supplementary file", false, sum("", 1, id), true, SupLink{ID: id, DWARF5: true}, true},
		{"debug_sup without a name", false, sum("", 0, id), false, SupLink{}, false},
		{"debug_sup, version 4", false, append([]byte{4}, sum("c", 0, id)[1:]...), false, SupLink{}, false},
		{"debug_sup, is_supplementary 2", false, sum("c", 2, id), false, SupLink{}, false},
		{"debug_sup, checksum past the end", false, sum("c", 0, id)[:12], false, SupLink{}, false},
		{"debug_sup, empty checksum", false, sum("c", 0, nil), false, SupLink{}, false},
		{"debug_sup, name without a NUL", false, []byte{5, 0, 0, 'c'}, false, SupLink{}, false},
		{"debug_sup, truncated", false, []byte{5, 0}, false, SupLink{}, false},
	} {
		var got SupLink
		var sup, ok bool
		if c.alt {
			got, ok = ParseAltLink(c.data)
		} else {
			sup, got, ok = ParseDebugSup(c.data, binary.LittleEndian)
		}
		if ok != c.wantOK || sup != c.wantSup || got.Name != c.want.Name || !bytes.Equal(got.ID, c.want.ID) || got.DWARF5 != c.want.DWARF5 {
			t.Errorf("%s: got %+v, sup %v, ok %v; want %+v, sup %v, ok %v", c.name, got, sup, ok, c.want, c.wantSup, c.wantOK)
		}
	}
}
