package elfrel

import (
	"bytes"
	"debug/elf"
	"errors"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/membudget"
)

// TestInflateBudget: compressed sections are decompressed only within the
// budget the file is given, which is taken before anything is allocated
// and shared with other files; a refusal is a *FormatError naming the
// file and the section, wrapping the *membudget.ExceededError.
func TestInflateBudget(t *testing.T) {
	info := bytes.Repeat([]byte{1, 2, 3, 4}, 64<<10) // 256 KiB
	obj := elftest.File{Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x1000, Data: []byte{0xc3}},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Data: compressedSection(t, info)},
	}}.Bytes()
	open := func(b *membudget.Budget) *DebugLoader {
		f, err := NewFile(bytes.NewReader(obj), int64(len(obj)), "x.o")
		if err != nil {
			t.Fatal(err)
		}
		f.SetInflateBudget(b)
		l, err := f.DebugLoader()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	budget := membudget.New(600<<10, "compressed debug sections decompressed", "-max_debug_mb")
	for i, read := range []func(l *DebugLoader) ([]byte, error){
		func(l *DebugLoader) ([]byte, error) { return l.Section(".debug_info") },
		func(l *DebugLoader) ([]byte, error) { return l.SectionRange(".debug_info", 4, 8) },
		func(l *DebugLoader) ([]byte, error) { return l.Section(".debug_info") },
	} {
		data, err := read(open(budget))
		if i < 2 {
			if err != nil || !bytes.Equal(data, info[:len(data)]) && !bytes.Equal(data, info[4:12]) {
				t.Errorf("read %d: %v", i, err)
			}
			continue
		}
		var fe *FormatError
		var ex *membudget.ExceededError
		const want = "x.o: section .debug_info: not decompressed: 262144 bytes, after 524288 before, would take the compressed debug sections decompressed past 614400 bytes, the limit for the run (-max_debug_mb raises it)"
		if err == nil || err.Error() != want || !errors.As(err, &fe) || !errors.As(err, &ex) {
			t.Errorf("read %d: %v, want %q", i, err, want)
		}
	}
}

// TestStrTable: names end at the first NUL at or after their offset; an
// offset outside the table or with no NUL after it gives none, whether
// the table scans for the NUL or searches its index of NULs.
func TestStrTable(t *testing.T) {
	const table = "\x00main\x00ain\x00\x00tail"
	for _, tc := range []struct {
		off  uint32
		want string
		ok   bool
	}{
		{off: 0, want: "", ok: true},
		{off: 1, want: "main", ok: true},
		{off: 2, want: "ain", ok: true},
		{off: 5, want: "", ok: true},
		{off: 6, want: "ain", ok: true},
		{off: 10, want: "", ok: true},
		{off: 11, ok: false}, // "tail" has no NUL
		{off: 14, ok: false},
		{off: 15, ok: false}, // the end
		{off: 1 << 30, ok: false},
	} {
		// Scanning, and by binary search once scans have cost too much.
		for _, tab := range []*strTable{newStrTable(table), {s: table, scanned: 1 << 30}} {
			got, ok := tab.at(tc.off)
			if got != tc.want || ok != tc.ok {
				t.Errorf("at(%d), %d bytes scanned before = %q, %v; want %q, %v", tc.off, tab.scanned, got, ok, tc.want, tc.ok)
			}
		}
	}
}
