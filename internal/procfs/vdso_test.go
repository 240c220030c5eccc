package procfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestVDSO: the image VDSO returns is the ELF file the kernel gave this
// process, found where the auxiliary vector says (AT_SYSINFO_EHDR):
// its first bytes are those at that address, and it defines the vDSO's
// clock_gettime. An FS of no proc file system has no vDSO.
func TestVDSO(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the vDSO is Linux's")
	}
	b, err := New("/proc").VDSO()
	if err != nil {
		t.Fatal(err)
	}
	// The oracle: the auxiliary vector's address, read in place.
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		t.Fatal(err)
	}
	const atSysinfoEHDR = 33
	var ehdr uint64
	for a := auxv; len(a) >= 16; a = a[16:] {
		if binary.NativeEndian.Uint64(a) == atSysinfoEHDR {
			ehdr = binary.NativeEndian.Uint64(a[8:])
		}
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	head := make([]byte, 64)
	if _, err := mem.ReadAt(head, int64(ehdr)); err != nil {
		t.Fatalf("reading AT_SYSINFO_EHDR %#x: %v", ehdr, err)
	}
	if !bytes.HasPrefix(b, head) {
		t.Errorf("the image does not begin with the ELF header at AT_SYSINFO_EHDR %#x", ehdr)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range syms {
		found = found || strings.HasSuffix(s.Name, "clock_gettime") && s.Value != 0
	}
	if !found {
		t.Errorf("the image defines no clock_gettime: %v", syms)
	}
	if _, err := (FS{}).VDSO(); err == nil {
		t.Error("an FS of no proc file system gave a vDSO")
	}
}
