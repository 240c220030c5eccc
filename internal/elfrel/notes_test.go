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
