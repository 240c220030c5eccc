package perfdata

import (
	"bytes"
	"debug/elf"
	"runtime"
	"testing"

	"github.com/jitpprof/pprof/internal/procfs"
)

// TestOwnVDSO: a recording's vDSO is unwound and named with this
// process's own only when it is the one recorded: of its build ID, or,
// where the recording has none, of its size; never with no proc file
// system. The oracle for the build ID is debug/elf's reading of the
// image's note.
func TestOwnVDSO(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the vDSO is Linux's")
	}
	proc := procfs.New("/proc")
	img, err := proc.VDSO()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	var id []byte
	for _, s := range ef.Sections {
		b, err := s.Data()
		for err == nil && s.Type == elf.SHT_NOTE && len(b) >= 12 {
			namesz, descsz, typ := ef.ByteOrder.Uint32(b), ef.ByteOrder.Uint32(b[4:]), ef.ByteOrder.Uint32(b[8:])
			name, desc := 12+(namesz+3)&^3, 12+(namesz+3)&^3+(descsz+3)&^3
			if uint64(desc) > uint64(len(b)) {
				break
			}
			if typ == 3 && string(b[12:12+namesz]) == "GNU\x00" { // NT_GNU_BUILD_ID
				id = b[name : name+descsz]
			}
			b = b[desc:]
		}
	}
	if len(id) == 0 {
		t.Fatal("this kernel's vDSO has no GNU build ID note")
	}
	size := uint64(len(img))
	for _, tc := range []struct {
		name string
		proc procfs.FS
		mm   mmapping
		id   []byte
		want bool
	}{
		{"its build ID", proc, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + size}, id, true},
		{"its build ID, another size", proc, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + 2*size}, id, true},
		{"another build ID", proc, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + size}, bytes.Repeat([]byte{0xab}, len(id)), false},
		{"no build ID, its size", proc, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + size}, nil, true},
		{"no build ID, another size", proc, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + size/2}, nil, false},
		{"no proc file system", procfs.FS{}, mmapping{file: "[vdso]", start: 0x7000, limit: 0x7000 + size}, id, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ff := &fileFinder{proc: tc.proc}
			tc.mm.buildID = tc.id
			f, err := ff.open(&tc.mm)
			if got := err == nil; got != tc.want {
				t.Fatalf("open: %v, want the vDSO: %v", err, tc.want)
			}
			if f == nil {
				return
			}
			defer f.Close()
			if got, _ := f.BuildID(); !bytes.Equal(got, id) {
				t.Errorf("build ID %x, want %x", got, id)
			}
		})
	}
}
