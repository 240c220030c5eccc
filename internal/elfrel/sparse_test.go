package elfrel

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// TestSparseFile: a file whose section headers claim gigabytes that lie
// in a hole of a sparse file is refused when opened, with an error naming
// it, before anything that size is allocated; the same object with its
// bytes really written is read.
func TestSparseFile(t *testing.T) {
	const claim = 1 << 30
	obj := elftest.File{Sections: []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x7f0000001000, Data: make([]byte, 16)},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: make([]byte, 16)},
		{Name: ".debug_abbrev", Type: elf.SHT_PROGBITS, Data: []byte{0}},
	}}
	data := obj.Bytes()
	plain := filepath.Join(t.TempDir(), "plain.elf")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(plain); err != nil {
		t.Fatal(err)
	} else if _, err := f.DebugLoader(); err != nil {
		t.Errorf("the object with its bytes written: %v", err)
	}
	shoff := binary.LittleEndian.Uint64(data[40:])
	info := shoff + 2*shdrSize // section 2, .debug_info
	const at = 1 << 20         // its contents move here, then grow into the hole
	binary.LittleEndian.PutUint64(data[info+24:], at)
	binary.LittleEndian.PutUint64(data[info+32:], claim)
	path := filepath.Join(t.TempDir(), "sparse.elf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, at+claim); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sys().(*syscall.Stat_t).Blocks*512 >= st.Size() {
		t.Skip("the file system reports no holes")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := Open(path)
	runtime.ReadMemStats(&after)
	if err == nil {
		f.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "sparse.elf") || !strings.Contains(err.Error(), "holes of a sparse file") {
		t.Errorf("got %v, want an error naming the file and saying it is sparse", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the sparse section allocated %d bytes", alloc)
	}
}
