package e2e

import (
	"bytes"
	"debug/elf"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"regexp"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/hostile"
	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/testenv"
)

// The hostile corpus's binaries, debug servers and source files: inputs
// built from the formats' specifications (package hostile) that once ran
// pprof out of memory or held it for ever. Each case runs pprof, through
// GNU time, and asserts the outcome (it ends within its time, the rest of
// the profile is symbolized), the message (naming the file and the
// limit), and peak RSS. The "was" of each case is what the version before
// these checks did with it (or with the same kind of input, where noted),
// measured by hand with /usr/bin/time under a 6 GiB address space limit.

// foreignFixture returns the path of the file name of
// internal/objtool/testdata/foreign. Its elf32 is a 32-bit i386
// executable with DWARF: the binary of a profile's good sample, whose
// function main must stay named whatever happens to the hostile binary
// beside it.
func foreignFixture(t *testing.T, name string) string {
	return filepath.Join(testenv.RepoRoot(t), "internal", "objtool", "testdata", "foreign", name)
}

// objProfile writes a profile with one sample in elf32Fixture's main and
// one at addr in the mapping [addr&^0xfff, +0x1000) at offset of the
// binary bin, and returns its path.
func objProfile(t *testing.T, dir, bin string, addr, offset uint64) string {
	t.Helper()
	good := foreignFixture(t, "elf32")
	gm := &profile.Mapping{ID: 1, Start: 0x08049000, Limit: 0x0804a000, Offset: 0x1000, File: good}
	hm := &profile.Mapping{ID: 2, Start: addr &^ 0xfff, Limit: addr&^0xfff + 0x1000, Offset: offset, File: bin}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{gm, hm},
		Location:   []*profile.Location{{ID: 1, Mapping: gm, Address: 0x08049010}, {ID: 2, Mapping: hm, Address: addr + 4}},
	}
	p.Sample = []*profile.Sample{
		{Location: []*profile.Location{p.Location[0]}, Value: []int64{5}},
		{Location: []*profile.Location{p.Location[1]}, Value: []int64{3}},
	}
	path := filepath.Join(dir, filepath.Base(bin)+".prof")
	writeProfile(t, path, p)
	return path
}

func writeProfile(t *testing.T, path string, p *profile.Profile) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// check fails t unless m ended in time, without a panic, with every one
// of want on stderr and peak RSS at most maxRSS.
func (m measured) check(t *testing.T, maxRSS int64, want ...string) {
	t.Helper()
	if m.timeout {
		t.Fatalf("did not end in time:\n%.2000s", m.stderr)
	}
	if bytes.Contains(m.stderr, []byte("goroutine ")) || bytes.Contains(m.stderr, []byte("fatal error")) {
		t.Fatalf("crashed:\n%.3000s", m.stderr)
	}
	for _, w := range want {
		if !bytes.Contains(m.stderr, []byte(w)) {
			t.Errorf("stderr does not say %q:\n%.2000s", w, m.stderr)
		}
	}
	if m.rss == 0 {
		t.Error("no peak RSS from GNU time")
	} else if m.rss > maxRSS {
		t.Errorf("peak RSS %d MiB, over %d MiB", m.rss>>20, maxRSS>>20)
	}
	t.Logf("%v, peak RSS %d MiB", m.elapsed.Round(time.Millisecond), m.rss>>20)
}

// TestHostileObjects runs pprof -top on a profile with a sample in each
// hostile binary, and one in a good binary, which must stay symbolized.
func TestHostileObjects(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name   string
		data   func() []byte
		addr   uint64
		args   []string
		want   []string
		maxRSS int64 // 0: 256 MiB
		was    string
	}{
		{name: "fat Mach-O of 20,000 members aliasing one (474 KB)", data: func() []byte { return hostile.MachOFat(hostile.MachO{Symbols: 3000}.Bytes(), 20000) },
			addr: hostile.MachOTextAddr, want: []string{"members at 0x62000 and 0x62000 overlap"}, was: "3.0 GB, 64 s"},
		{name: "Mach-O of 25,000 symbols naming one 50 KB string", data: func() []byte { return hostile.MachO{Symbols: 25000, NameLen: 50000}.Bytes() },
			addr: hostile.MachOTextAddr, want: []string{"its symbols' names, one copy per reference, add up to more than"}, was: "1.5 GB, 7.8 s"},
		{name: "Mach-O of 5,000 sections with one relocation table", data: func() []byte { return hostile.MachO{Sections: 5000, Relocs: 20000}.Bytes() },
			addr: hostile.MachOTextAddr, want: []string{"the relocations of section", "and the other tables add up to more than the 564306-byte file: they overlap"}, was: "2.1 GB, 46 s"},
		{name: "PE of 60,000 sections with one relocation table (3 MB)", data: func() []byte { return hostile.PE{Sections: 60000, Relocs: 65535}.Bytes() },
			addr: hostile.PEImageBase + 0x1000, want: []string{"the relocations of section", "they overlap"}, was: "out of memory at 4.5 GB, 83 s"},
		{name: "PE of 100,000 symbols naming one 100 KB string", data: func() []byte { return hostile.PE{Symbols: 100000, NameLen: 100000}.Bytes() },
			addr: hostile.PEImageBase + 0x1000, want: []string{"its symbols' names, one copy per reference"}, was: "out of memory at 4.4 GB, 13 s"},
		{name: "ELF32 whose zlib .debug_info holds 3.9 GB (3.8 MB)", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 3_900_000_000, false, 0)
		}, addr: hostile.TextAddr, want: []string{"section .debug_info: not decompressed: 3899999983 bytes would take the compressed debug sections decompressed past 1024 MiB, the limit for the run (-max_debug_mb raises it)"},
			was: "out of memory at 3.2 GB, 13 s"},
		{name: "ELF64 whose zlib .debug_info holds 3.9 GB (3.8 MB)", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS64, elf.EM_X86_64, 3_900_000_000, false, 0)
		}, addr: hostile.TextAddr, want: []string{"section .debug_info: not decompressed: 3899999983 bytes", "(-max_debug_mb raises it)"}, was: "out of memory at 3.8 GB, 19 s"},
		{name: "ELF32 whose Zstandard .debug_info claims 3.9 GB (120 KB)", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 3_900_000_000, true, 0)
		}, addr: hostile.TextAddr, want: []string{"section .debug_info: claims 3900000000 bytes once decompressed, more than 119026 compressed bytes can hold"}, was: "out of memory at 3.4 GB, 14 s"},
		{name: "ELF32 ARM whose Zstandard .debug_info claims 3.9 GB", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_ARM, 3_900_000_000, true, 0)
		}, addr: hostile.TextAddr, want: []string{"claims 3900000000 bytes once decompressed"}, was: "out of memory at 4.3 GB, 16 s"},
		{name: "ELF32 whose zlib .debug_info holds 200 MB, past -max_debug_mb=64", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 200<<20, false, 0)
		}, addr: hostile.TextAddr, args: []string{"-max_debug_mb=64"}, want: []string{"past 64 MiB, the limit for the run (-max_debug_mb raises it); its symbols are used without its DWARF"}},
		// The flag raises the limit: the 200 MB of zeros are read (and
		// found to be no DWARF).
		{name: "ELF32 whose zlib .debug_info holds 200 MB, within -max_debug_mb=256", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 200<<20, false, 0)
		}, addr: hostile.TextAddr, args: []string{"-max_debug_mb=256"}, want: []string{"section .debug_info: unexpected end of data"}, maxRSS: 512 * mib},
		{name: "ELF32 whose .debug_info and 4 more alias one zlib stream", data: func() []byte {
			return hostile.ELFCompressed(elf.ELFCLASS32, elf.EM_386, 1_000_000_000, false, 4)
		}, addr: hostile.TextAddr, want: []string{"its DWARF sections add up to more than the", "they overlap"}, was: "out of memory at 3.9 GB (in Zstandard), 11 s"},
		{name: "ELF32 of 65,000 sections named by one 400 KB string (3 MB)", data: func() []byte {
			return hostile.ELFSectionNames(elf.ELFCLASS32, 65000, 400_000)
		}, addr: hostile.TextAddr, want: []string{"its sections' names, one copy per reference"}, was: "out of memory at 4.6 GB, 27 s"},
		{name: "ELF64 of 40,000 sections named by one 400 KB string", data: func() []byte {
			return hostile.ELFSectionNames(elf.ELFCLASS64, 40000, 400_000)
		}, addr: hostile.TextAddr, was: "20 MB, 32 s (11 s of CPU)"},
		{name: "ELF32 of 1,000,000 symbols, each of its own address, naming one 4 KB string", data: func() []byte {
			return hostile.ELFSymbols(elf.ELFCLASS32, 1_000_000, 4000, true)
		}, addr: hostile.TextAddr, was: "3.9 GB, 12 s"},
		{name: "ELF64 of 1,000,000 symbols, each of its own address, naming one 4 KB string", data: func() []byte {
			return hostile.ELFSymbols(elf.ELFCLASS64, 1_000_000, 4000, true)
		}, addr: hostile.TextAddr, was: "3.9 GB, 22 s"},
		// Symbols that are what the file holds: the index of 2,000,000
		// takes about 6 times the file, as in a 64-bit file.
		{name: "ELF32 of 2,000,000 symbols (50 MB)", data: func() []byte { return hostile.ELFSymbols(elf.ELFCLASS32, 2_000_000, 0, false) },
			addr: hostile.TextAddr, maxRSS: 400 * mib, was: "1.8 GB, 7.3 s for 5,000,000 (124 MB); 756 MB now, as a 64-bit file's"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(dir, fmt.Sprintf("bin%d", i))
			data := tc.data()
			if err := os.WriteFile(bin, data, 0o644); err != nil {
				t.Fatal(err)
			}
			offset := uint64(0)
			if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
				offset = hostile.TextOffset
			}
			prof := objProfile(t, dir, bin, tc.addr, offset)
			m := runMeasured(t, dir, nil, 60*time.Second, append(append([]string{"-top"}, tc.args...), prof)...)
			maxRSS := tc.maxRSS
			if maxRSS == 0 {
				maxRSS = 256 * mib
			}
			m.check(t, maxRSS, tc.want...)
			if len(tc.want) > 0 && !bytes.Contains(m.stderr, []byte(bin)) {
				t.Errorf("stderr does not name %s:\n%.2000s", bin, m.stderr)
			}
			if m.err != nil || !bytes.Contains(m.stdout, []byte(" main\n")) {
				t.Errorf("the good binary's main is not named (%v):\n%s\n%.2000s", m.err, m.stdout, m.stderr)
			}
			if tc.was != "" {
				t.Logf("was: %s", tc.was)
			}
		})
	}
}

// TestHostileDSYM: a FIFO where a Mach-O executable's dSYM file would be
// held pprof for ever; now it is said and the executable read without
// it.
func TestHostileDSYM(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, hostile.MachO{Symbols: 10}.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dwarfDir := filepath.Join(dir, "prog.dSYM", "Contents", "Resources", "DWARF")
	if err := os.MkdirAll(dwarfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dwarfDir, "prog"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := runMeasured(t, dir, nil, 30*time.Second, "-top", objProfile(t, dir, bin, hostile.MachOTextAddr, 0))
	m.check(t, 256<<20, bin+": its dSYM file is not read", "not a regular file (p---------)")
	if !bytes.Contains(m.stdout, []byte(" main\n")) || !bytes.Contains(m.stdout, []byte(" f4\n")) {
		t.Errorf("main or the executable's own f4 not named:\n%s", m.stdout)
	}
	t.Log("was: held for ever")
}

// TestHostilePerfFiles: perf's configuration file and its copy of the
// kernel's symbols are read from paths others may write; a FIFO there
// held pprof for ever (a recording of the golden set, whose kernel has a
// build ID).
func TestHostilePerfFiles(t *testing.T) {
	data := filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "golden", "single.data")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "perfconfig")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// The report with nothing hostile, which each must still give.
	want := run(pprofCmd(t, dir, nil, "-top", data))
	total := regexp.MustCompile(`Total samples = \S+`).Find(want.stdout)
	if want.err != nil || total == nil {
		t.Fatalf("pprof -top %s: %v\n%s", data, want.err, want.stderr)
	}
	// single.data's kernel build ID (perf buildid-list).
	id := kernelBuildID(t, data)
	kallsyms := filepath.Join(dir, "cache", ".build-id", id[:2], id[2:], "kallsyms")
	if err := os.MkdirAll(filepath.Dir(kallsyms), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(kallsyms, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{name: "PERF_CONFIG names a FIFO", env: []string{"PERF_CONFIG=" + fifo}, want: "perf's configuration: open " + fifo + ": not a regular file (p---------)"},
		{name: "PERF_CONFIG names /dev/urandom", env: []string{"PERF_CONFIG=/dev/urandom"}, want: "perf's configuration: open /dev/urandom: not a regular file"},
		{name: "kallsyms in perf's cache is a FIFO", env: []string{"PERF_BUILDID_DIR=" + filepath.Join(dir, "cache")}, want: "perf's copy of the recorded kernel's symbols is not read: open " + kallsyms + ": not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := runMeasured(t, dir, tc.env, 30*time.Second, "-top", data)
			m.check(t, 256<<20, tc.want)
			if m.err != nil || !bytes.Contains(m.stdout, total) {
				t.Errorf("the recording's profile is not all there (%v), want %s:\n%s", m.err, total, m.stdout)
			}
			t.Log("was: held for ever")
		})
	}
}

// kernelBuildID returns the build ID perf recorded for the kernel in
// the recording data, in hexadecimal.
func kernelBuildID(t *testing.T, data string) string {
	t.Helper()
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := perfdata.Open(f, st.Size(), data)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%x", pf.BuildIDs["[kernel.kallsyms]"])
	if len(id) < 4 {
		t.Fatalf("%s has no build ID of the kernel", data)
	}
	return id
}

// TestHostileSourceFiles: pprof's -list and -weblist open the source
// files the debug information names; a FIFO there held them for ever,
// /dev/urandom ran them out of memory. The program is compiled here, and
// its source replaced by each.
func TestHostileSourceFiles(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "prog.c")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("int main(void) {\n  volatile int x = 0;\n  for (;;) x++;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command(gcc, "-g", "-O0", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	syms, _ := f.Symbols()
	f.Close()
	var main uint64
	for _, s := range syms {
		if s.Name == "main" {
			main = s.Value
		}
	}
	if text == nil || main == 0 {
		t.Fatal("no text segment or main")
	}
	m := &profile.Mapping{ID: 1, Start: text.Vaddr, Limit: text.Vaddr + text.Memsz, Offset: text.Off, File: bin}
	loc := &profile.Location{ID: 1, Mapping: m, Address: main + 4}
	prof := filepath.Join(dir, "prog.prof")
	writeProfile(t, prof, &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping: []*profile.Mapping{m}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{7}}}})
	if r := runPProf(t, dir, nil, "-list=main", prof); !bytes.Contains(r.stdout, []byte("for (;;) x++;")) {
		t.Fatalf("-list does not show the source:\n%s\n%s", r.stdout, r.stderr)
	}
	os.Remove(src)
	if err := syscall.Mkfifo(src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T)
		args  []string
		kind  string
	}{
		{name: "-list, a FIFO", args: []string{"-list=main"}, kind: "a FIFO"},
		{name: "-weblist, a FIFO", args: []string{"-weblist=main", "-output=" + filepath.Join(dir, "list.html")}, kind: "a FIFO"},
		{name: "-list, /dev/urandom", setup: func(t *testing.T) {
			os.Remove(src)
			if err := os.Symlink("/dev/urandom", src); err != nil {
				t.Fatal(err)
			}
		}, args: []string{"-list=main"}, kind: "a character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			m := runMeasured(t, dir, nil, 30*time.Second, append(tc.args, prof)...)
			m.check(t, 256<<20, "source file "+src+": "+src+" is "+tc.kind+", not a regular file", src+" (not a regular file)")
			if m.err != nil {
				t.Errorf("pprof failed: %v\n%s", m.err, m.stderr)
			}
			t.Log("was: held for ever (the FIFO); out of memory (/dev/urandom)")
		})
	}
}

// TestHostileDebuginfod: a debuginfod server that accepts and never
// answers, trickles bytes, or sends without end held pprof as long as it
// liked; now each is abandoned at its limit, said naming the server, and
// the binary (one with a build ID and no DWARF) is read without it.
func TestHostileDebuginfod(t *testing.T) {
	bin := foreignFixture(t, "elf32-plt")
	for _, tc := range []struct {
		name string
		env  []string
		// serve handles a connection; it returns when the test ends.
		serve func(c net.Conn, done <-chan struct{})
		want  string
	}{
		{name: "accepts, never answers", env: []string{"DEBUGINFOD_TIMEOUT=2"},
			serve: func(c net.Conn, done <-chan struct{}) { <-done }, want: "no byte in 2s (DEBUGINFOD_TIMEOUT)"},
		{name: "trickles a byte a second", env: []string{"DEBUGINFOD_TIMEOUT=2"},
			serve: func(c net.Conn, done <-chan struct{}) {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"))
				for {
					select {
					case <-done:
						return
					case <-time.After(500 * time.Millisecond):
						if _, err := c.Write([]byte{0x7f}); err != nil {
							return
						}
					}
				}
			}, want: "bytes in 2s, less than 100 KiB (DEBUGINFOD_TIMEOUT)"},
		{name: "sends without end", env: []string{"DEBUGINFOD_MAXTIME=2", "DEBUGINFOD_MAXSIZE=0"},
			serve: func(c net.Conn, done <-chan struct{}) {
				c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
				chunk := make([]byte, 64<<10)
				for {
					select {
					case <-done:
						return
					default:
					}
					if _, err := c.Write(chunk); err != nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}, want: "not done in 2s (DEBUGINFOD_MAXTIME)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						tc.serve(c, done)
					}()
				}
			}()
			defer func() { close(done); l.Close() }()
			dir := t.TempDir()
			url := "http://" + l.Addr().String()
			env := append([]string{"DEBUGINFOD_URLS=" + url, "DEBUGINFOD_CACHE_PATH=" + filepath.Join(dir, "cache")}, tc.env...)
			m := runMeasured(t, dir, env, 30*time.Second, "-top", objProfile(t, dir, bin, 0x56555070, 0x1000))
			m.check(t, 256<<20, bin+": debuginfod: "+url+"/buildid/ea445a04117e20b5959614fd5c9395c1a34c3db8/debuginfo: ", tc.want)
			if m.elapsed > 15*time.Second || !bytes.Contains(m.stdout, []byte(" main\n")) {
				t.Errorf("took %v; want the limit's 2 s and the binaries' main:\n%s", m.elapsed, m.stdout)
			}
			t.Log("was: as long as the server liked (with no DEBUGINFOD_MAXTIME)")
		})
	}
}

// TestHostileFlameGraph: a profile of 150,000 distinct functions made a
// flame graph of as many frames and folded stacks of 21 MB; now the
// smallest frames are merged, said on stderr, and the output is bounded.
func TestHostileFlameGraph(t *testing.T) {
	dir := t.TempDir()
	const leaves = 150000
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}, PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x40000000, File: "/bin/app", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	loc := func(name string) *profile.Location {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "/src/app.cc"}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: 0x400000 + 16*uint64(len(p.Location)), Line: []profile.Line{{Function: f, Line: 1}}}
		p.Location = append(p.Location, l)
		return l
	}
	root := loc("main")
	var mids []*profile.Location
	for i := range 1000 {
		mids = append(mids, loc(fmt.Sprintf("app::Dispatcher<int>::handle_%d(Request const&)", i)))
	}
	for i := range leaves {
		leaf := loc(fmt.Sprintf("app::Worker<long>::compute_%d(std::vector<int> const&)", i))
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{leaf, mids[i%1000], root}, Value: []int64{1000}})
	}
	prof := filepath.Join(dir, "big.prof")
	writeProfile(t, prof, p)
	for _, format := range []string{"folded", "flamegraph"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(dir, "out."+format)
			r := runMeasured(t, dir, nil, 120*time.Second, "-"+format, "-symbolize=none", "-output="+out, prof)
			r.check(t, 384<<20, fmt.Sprintf("-%s: the call tree has %d frames, more than 100000: its %d frames of at most 1000 nanoseconds (0.00067%% of the total) each are merged into frames named \"[merged frames, each at most 0.00067%% of the total]\"", format, leaves+1001, leaves))
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if format == "folded" {
				lines := strings.Count(string(data), "\n")
				if lines != 1000 || !strings.HasPrefix(string(data), "main;app::Dispatcher<int>::handle_0(Request const&);[merged frames, each at most 0.00067% of the total] 150000\n") {
					t.Errorf("%d lines, want 1,000 of one merged frame each:\n%.500s", lines, data)
				}
			}
			t.Logf("%d bytes written (was, for 300,000 functions: 776 MB peak RSS, 9.5 s of CPU, 42 MB of folded stacks)", len(data))
		})
	}
}
