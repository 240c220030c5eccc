package objtool

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/hostile"
)

// TestHostileForeignFiles opens files of the containers the standard
// library reads (Mach-O, PE, 32-bit ELF) whose headers the formats'
// specifications allow and whose tables alias one range, or whose
// compressed sections claim gigabytes, and asks what pprof asks of a
// binary. A reader trusting them allocates what "copies" says (the
// standard library's readers did, running pprof out of memory on larger
// ones); here each is refused, or read within its budget, with a message
// naming the file and the problem, allocating at most 64 MiB plus 8
// times the file (runtime.MemStats.TotalAlloc, which bounds the peak).
// The sizes keep what a regression would allocate to a few hundred MB,
// and the budgets to 256 MiB, so that it fails the test, not the
// machine.
func TestHostileForeignFiles(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		addr   uint64 // of its code, where SourceLine is asked
		budget int64  // Options.MaxDecompressed; 0 for the default
		copies string // what a reader copying every reference allocates
		// want must be in Open's error, or, if Open succeeds, in a
		// warning.
		want string
	}{
		{name: "fat Mach-O of 2,000 members aliasing one", data: hostile.MachOFat(hostile.MachO{Symbols: 3000}.Bytes(), 2000),
			addr: hostile.MachOTextAddr, copies: "the 70 KB member 2,000 times", want: `members at 0x[0-9a-f]+ and 0x[0-9a-f]+ overlap`},
		{name: "Mach-O of 5,000 symbols naming one 50 KB string", data: hostile.MachO{Symbols: 5000, NameLen: 50000}.Bytes(),
			addr: hostile.MachOTextAddr, copies: "5,000 × 50 KB = 250 MB", want: `its symbols' names, one copy per reference, add up to more than \d+ bytes for a \d+-byte file: they overlap`},
		{name: "Mach-O of 1,000 sections with one relocation table", data: hostile.MachO{Sections: 1000, Relocs: 10000}.Bytes(),
			addr: hostile.MachOTextAddr, copies: "1,000 × 10,000 relocations of 24 bytes = 240 MB", want: `the relocations of section \d+ \(80000 bytes at 0x[0-9a-f]+\) and the other tables add up to more than the \d+-byte file: they overlap`},
		{name: "PE of 400 sections with one relocation table", data: hostile.PE{Sections: 400, Relocs: 65535}.Bytes(),
			addr: hostile.PEImageBase + 0x1000, copies: "400 × 65,535 relocations of 12 bytes = 314 MB", want: `the relocations of section \d+ \(655350 bytes at 0x[0-9a-f]+\) and the other tables add up`},
		{name: "PE of 3,000 symbols naming one 100 KB string", data: hostile.PE{Symbols: 3000, NameLen: 100000}.Bytes(),
			addr: hostile.PEImageBase + 0x1000, copies: "3,000 × 100 KB = 300 MB", want: `its symbols' names, one copy per reference, add up to more than`},
		{name: "ELF32 of 3,000 sections named by one 100 KB string", data: hostile.ELFSectionNames(elf.ELFCLASS32, 3000, 100000),
			addr: hostile.TextAddr, copies: "3,000 × 100 KB = 300 MB", want: `its sections' names, one copy per reference, add up to more than`},
		{name: "ELF32 whose Zstandard .debug_info claims 4 GB", data: hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 1<<32-1, true, 0),
			addr: hostile.TextAddr, budget: 256 << 20, copies: "4 GB", want: `section \.debug_info: claims 4294967295 bytes once decompressed, more than \d+ compressed bytes can hold; no function names or source lines are read from it`},
		{name: "ELF32 ARM whose Zstandard .debug_info claims 4 GB", data: hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_ARM, 1<<32-1, true, 0),
			addr: hostile.TextAddr, budget: 256 << 20, copies: "4 GB", want: `claims 4294967295 bytes once decompressed`},
		{name: "ELF32 whose .debug_info and 4 more alias one zlib stream", data: hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 16<<20, false, 4),
			addr: hostile.TextAddr, copies: "5 × 16 MiB = 80 MiB", want: `its DWARF sections add up to more than the \d+-byte file: they overlap`},
		{name: "ELF32 whose zlib .debug_info holds 16 MiB, past a budget of 4 MiB", data: hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 16<<20, false, 0),
			addr: hostile.TextAddr, budget: 4 << 20, copies: "16 MiB",
			want: `section \.debug_info: not decompressed: \d+ bytes would take the compressed debug sections decompressed past 4 MiB, the limit for the run \(-max_debug_mb raises it\); its symbols are used without its DWARF`},
		{name: "ELF64 whose zlib .debug_info holds 16 MiB, past a budget of 4 MiB", data: hostile.ELFCompressed(elf.ELFCLASS64, elf.EM_X86_64, 16<<20, false, 0),
			addr: hostile.TextAddr, budget: 4 << 20, copies: "16 MiB",
			want: `section \.debug_info: not decompressed: \d+ bytes would take .* past 4 MiB, the limit for the run \(-max_debug_mb raises it\); its symbols are used without its DWARF`},
		{name: "ELF32 of 50,000 symbols, each of its own address, naming one 4 KB string", data: hostile.ELFSymbols(elf.ELFCLASS32, 50000, 4000, true),
			addr: hostile.TextAddr, copies: "50,000 × 4 KB = 200 MB, twice"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, string(rune('a'+i)))
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var warnings []string
			var mu sync.Mutex
			tool := New(Options{DebugDirs: []string{dir}, MaxDecompressed: tc.budget, Warn: func(msg string) {
				mu.Lock()
				warnings = append(warnings, msg)
				mu.Unlock()
			}})
			defer tool.Close()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			offset := uint64(0)
			if strings.HasPrefix(string(tc.data), elf.ELFMAG) {
				offset = hostile.TextOffset
			}
			of, err := tool.Open(path, tc.addr, tc.addr+0x1000, offset, "")
			if err == nil {
				of.SourceLine(tc.addr + 4)
				of.Symbols(regexp.MustCompile("."), 0)
				tool.Disasm(path, tc.addr, tc.addr+64, false)
			}
			runtime.ReadMemStats(&ms)
			allocated := ms.TotalAlloc - before
			if limit := 64<<20 + 8*uint64(len(tc.data)); allocated > limit {
				t.Errorf("allocated %d MiB, more than %d MiB (a reader copying every reference: %s)", allocated>>20, limit>>20, tc.copies)
			}
			got := strings.Join(warnings, "\n")
			if err != nil {
				got = err.Error()
			}
			if tc.want != "" && !regexp.MustCompile(tc.want).MatchString(got) || !strings.Contains(got, path) && tc.want != "" {
				t.Errorf("got %q, want a message naming %s and matching %q", got, path, tc.want)
			}
			if tc.want == "" && (err != nil || got != "") {
				t.Errorf("error %v, warnings %q; want none", err, got)
			}
			t.Logf("allocated %d MiB (a reader copying every reference: %s)", allocated>>20, tc.copies)
		})
	}
}

// TestInflateBudgetPerRun: the budget of decompressed sections is one
// for all the files a Tool reads: the second file past it is read
// without its DWARF, with a message saying what the first took.
func TestInflateBudgetPerRun(t *testing.T) {
	dir := t.TempDir()
	var warnings []string
	var mu sync.Mutex
	tool := New(Options{DebugDirs: []string{dir}, MaxDecompressed: 5 << 20, Warn: func(msg string) {
		mu.Lock()
		warnings = append(warnings, msg)
		mu.Unlock()
	}})
	defer tool.Close()
	for i, c := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		path := filepath.Join(dir, c.String())
		if err := os.WriteFile(path, hostile.ELFCompressed(c, elf.EM_386+elf.Machine(i)*(elf.EM_X86_64-elf.EM_386), 3<<20, false, 0), 0o644); err != nil {
			t.Fatal(err)
		}
		of, err := tool.Open(path, hostile.TextAddr, hostile.TextAddr+0x1000, hostile.TextOffset, "")
		if err != nil {
			t.Fatal(err)
		}
		of.SourceLine(hostile.TextAddr)
	}
	got := strings.Join(warnings, "\n")
	want := filepath.Join(dir, "ELFCLASS64") + ": section .debug_info: not decompressed: 3145537 bytes, after 3145537 before, would take the compressed debug sections decompressed past 5 MiB"
	if !strings.Contains(got, want) || strings.Contains(got, filepath.Join(dir, "ELFCLASS32")+": section .debug_info: not decompressed") {
		t.Errorf("warnings:\n%s\nwant one saying\n%s", got, want)
	}
}

// TestDSYMFIFO: a FIFO where a Mach-O executable's dSYM file would be is
// not opened (an open(2) would wait for a writer for ever): the
// executable is read without it, with a message saying why.
func TestDSYMFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prog")
	if err := os.WriteFile(path, hostile.MachO{Symbols: 10}.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dwarfDir := filepath.Join(dir, "prog.dSYM", "Contents", "Resources", "DWARF")
	if err := os.MkdirAll(dwarfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dwarfDir, "prog"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	tool := New(Options{Warn: func(msg string) { warnings = append(warnings, msg) }})
	defer tool.Close()
	done := make(chan error, 1)
	go func() {
		of, err := tool.Open(path, hostile.MachOTextAddr, hostile.MachOTextAddr+0x1000, 0, "")
		if err == nil {
			_, err = of.SourceLine(hostile.MachOTextAddr + 4)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open blocked on the dSYM FIFO")
	}
	want := path + ": its dSYM file is not read: error opening " + filepath.Join(dwarfDir, "prog") + ": open " + filepath.Join(dwarfDir, "prog") + ": not a regular file (p---------)"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}
