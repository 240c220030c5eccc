package procfs

import (
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	text := strings.Join([]string{
		"7fd1e84d7000-7fd1e84e0000 rw-p 068d6000 fe:00 325975                     /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"00400000-00404000 r--p 00000000 fe:00 1 /tmp/dir with spaces/jit_host (deleted)",
		"7ff4d5647000-7ff4d5662000 r-xp 00000000 00:00 0 ",
		"7ffc4a1f0000-7ffc4a211000 rw-p 00000000 00:00 0                          [stack]",
	}, "\n")
	got, err := ParseMaps(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x400000, Limit: 0x404000, Perms: "r--p", Dev: "fe:00", Inode: 1, Path: "/tmp/dir with spaces/jit_host (deleted)"},
		{Start: 0x7fd1e84d7000, Limit: 0x7fd1e84e0000, Perms: "rw-p", Offset: 0x68d6000, Dev: "fe:00", Inode: 325975, Path: "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"},
		{Start: 0x7ff4d5647000, Limit: 0x7ff4d5662000, Perms: "r-xp", Dev: "00:00"},
		{Start: 0x7ffc4a1f0000, Limit: 0x7ffc4a211000, Perms: "rw-p", Dev: "00:00", Path: "[stack]"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d: got %v, want %v", i, got[i], want[i])
		}
	}
	for i, wantFile := range []bool{true, true, false, false} {
		if got[i].File() != wantFile {
			t.Errorf("mapping %d (%s): got File() %v, want %v", i, got[i].Path, got[i].File(), wantFile)
		}
	}
	if !got[2].Executable() || got[2].Writable() || !got[2].Readable() {
		t.Errorf("r-xp: got executable %v writable %v readable %v", got[2].Executable(), got[2].Writable(), got[2].Readable())
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, tt := range []struct {
		line, want string
	}{
		{line: "7000 r-xp 0 00:00 0", want: "not START-LIMIT"},
		{line: "zz-7000 r-xp 0 00:00 0", want: "start address"},
		{line: "7000-zz r-xp 0 00:00 0", want: "limit address"},
		{line: "8000-7000 r-xp 0 00:00 0", want: "ends before it starts"},
		{line: "7000-8000 rx 0 00:00 0", want: "not four letters"},
		{line: "7000-8000 r-xp q 00:00 0", want: "offset"},
		{line: "7000-8000 r-xp 0 0000 0", want: "MAJOR:MINOR"},
		{line: "7000-8000 r-xp 0 00:00 x", want: "inode"},
	} {
		_, err := ParseMaps(strings.NewReader("6000-7000 r--p 0 00:00 0\n" + tt.line))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ParseMaps(%q): got %v, want an error on line 2 containing %q", tt.line, err, tt.want)
		}
	}
}
