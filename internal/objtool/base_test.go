package objtool

import (
	"debug/elf"
	"testing"
)

// TestGetBase checks getBase on every mapping kind upstream pprof
// distinguishes. The cases and their expected bases are those of
// upstream's own elfexec.TestGetBase at the pinned version, so that a
// base computed here is the one upstream computes.
func TestGetBase(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	lsOffset := &elf.ProgHeader{Vaddr: 0x400000, Off: 0x200000}
	kernel := &elf.ProgHeader{Vaddr: 0xffffffff81000000}
	kernelASLR := &elf.ProgHeader{Vaddr: 0xffffffff80200000, Off: 0x1000}
	kernelPIEAligned := &elf.ProgHeader{Vaddr: 0xffff800010010000, Off: 0x10000}
	kernelPIEUnaligned := &elf.ProgHeader{Vaddr: 0xffffffc010080800, Off: 0x10800}
	ppc64Kernel := &elf.ProgHeader{Vaddr: 0xc000000000000000}
	for _, tc := range []struct {
		label                string
		typ                  elf.Type
		seg                  *elf.ProgHeader
		stext                *uint64
		start, limit, offset uint64
		want                 uint64
		wantErr              bool
	}{
		{"exec", elf.ET_EXEC, nil, nil, 0x400000, 0, 0, 0, false},
		{"exec offset", elf.ET_EXEC, lsOffset, nil, 0x400000, 0x800000, 0, 0x200000, false},
		{"exec offset 2", elf.ET_EXEC, lsOffset, nil, 0x200000, 0x600000, 0, 0, false},
		{"exec nomap", elf.ET_EXEC, nil, nil, 0, 0, 0, 0, false},
		{"exec kernel", elf.ET_EXEC, kernel, u(0xffffffff81000198), 0xffffffff82000198, 0xffffffff83000198, 0, 0x1000000, false},
		{"exec kernel 2", elf.ET_EXEC, kernel, u(0xffffffff810002b8), 0xffffffff81000000, 0xffffffffa0000000, 0, 0, false},
		{"exec kernel ASLR", elf.ET_EXEC, kernel, u(0xffffffff810002b8), 0xffffffff81000000, 0xffffffffa0000000, 0xffffffff81000000, 0, false},
		{"exec kernel ASLR 2", elf.ET_EXEC, kernelASLR, nil, 0xffffffff83e00000, 0xfffffffffc3fffff, 0x3c00000, 0x3c00000, false},
		{"exec PPC64 kernel", elf.ET_EXEC, ppc64Kernel, u(0xc000000000000000), 0xc000000000000000, 0xd00000001a730000, 0, 0, false},
		{"exec chromeos kernel", elf.ET_EXEC, kernel, u(0xffffffff81000198), 0, 0x10197, 0, 0x7efffe68, false},
		{"exec chromeos kernel 2", elf.ET_EXEC, kernel, u(0xffffffff81000198), 0, 0x10198, 0, 0x7efffe68, false},
		{"exec chromeos kernel 3", elf.ET_EXEC, kernel, u(0xffffffff81000198), 0x198, 0x100000, 0, 0x7f000000, false},
		{"exec chromeos kernel 4", elf.ET_EXEC, kernel, u(0xffffffff81200198), 0x198, 0x100000, 0, 0x7ee00000, false},
		{"exec chromeos kernel unremapped", elf.ET_EXEC, kernel, u(0xffffffff810001c8), 0xffffffff834001c8, 0xffffffffc0000000, 0xffffffff834001c8, 0x2400000, false},
		{"dyn", elf.ET_DYN, nil, nil, 0x200000, 0x300000, 0, 0x200000, false},
		{"dyn map", elf.ET_DYN, lsOffset, nil, 0, 0x300000, 0, 0xffffffffffe00000, false},
		{"dyn nomap", elf.ET_DYN, nil, nil, 0, 0, 0, 0, false},
		{"dyn map+offset", elf.ET_DYN, lsOffset, nil, 0x900000, 0xa00000, 0x200000, 0x500000, false},
		{"dyn kernel", elf.ET_DYN, kernelPIEAligned, u(0xffff800010000000), 0xffff800010000000, 0xffff800012815c00, 0xffff800010000000, 0, false},
		{"dyn chromeos aslr kernel", elf.ET_DYN, kernelPIEUnaligned, u(0xffffffc010080800), 0x800, 0xb7f800, 0, 0x3feff80000, false},
		{"dyn chromeos aslr kernel unremapped", elf.ET_DYN, kernelPIEUnaligned, u(0xffffffc010080800), 0xffffffdb5d680800, 0xffffffdb5e200000, 0xffffffdb5d680800, 0x1b4d600000, false},
		{"rel", elf.ET_REL, nil, nil, 0x2000000, 0x3000000, 0, 0x2000000, false},
		{"rel nomap (a JIT object)", elf.ET_REL, nil, nil, 0, ^uint64(0), 0, 0, false},
		{"rel offset", elf.ET_REL, nil, nil, 0x100000, 0x200000, 1, 0, true},
	} {
		got, err := getBase(tc.typ, tc.seg, tc.stext, tc.start, tc.limit, tc.offset)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.label, err, tc.wantErr)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("%s: base %#x, want %#x", tc.label, got, tc.want)
		}
	}
}
