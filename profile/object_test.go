package profile

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/jitdump"
)

// TestLoadRefusesImpossibleCode: an LLVM dump whose executable section
// claims addresses no JIT code can have is left out, with a warning
// naming it, and does not take over the addresses of a good object.
func TestLoadRefusesImpossibleCode(t *testing.T) {
	exec := elf.SHF_ALLOC | elf.SHF_EXECINSTR
	good := elftest.File{Sections: []elftest.Section{{Name: ".text", Type: elf.SHT_PROGBITS, Flags: exec, Addr: 0x7f0000001000, Data: make([]byte, 64)}}}
	for _, tc := range []struct {
		name string
		bad  elftest.Section
		want string
	}{
		{"NOBITS code over the whole address space", elftest.Section{Name: ".text", Type: elf.SHT_NOBITS, Flags: exec, Addr: 1, Size: 1<<64 - 2}, `executable section ".text" is SHT_NOBITS`},
		{"code above user space", elftest.Section{Name: ".text.k", Type: elf.SHT_PROGBITS, Flags: exec, Addr: 0xffffffff81000000, Data: make([]byte, 16)}, `lies outside the user address space`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "good.elf"), good.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			bad := elftest.File{Sections: []elftest.Section{tc.bad}}
			if err := os.WriteFile(filepath.Join(dir, "bogus.elf"), bad.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			set, errs := Load([]string{dir})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bogus.elf") || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors %v, want one naming bogus.elf: %s", errs, tc.want)
			}
			if obj, _ := set.Lookup(0x7f0000001010); obj == nil || filepath.Base(obj.Path) != "good.elf" {
				t.Errorf("0x7f0000001010 is in %v, want good.elf", obj)
			}
		})
	}
}

// TestLoadErrorsTyped: a broken JIT file is reported with the reader's
// typed error, which callers can test with errors.Is and errors.As, in a
// message that names the file once.
func TestLoadErrorsTyped(t *testing.T) {
	exec := elf.SHF_ALLOC | elf.SHF_EXECINSTR
	dyn := elftest.File{Type: elf.ET_DYN, Sections: []elftest.Section{{Name: ".text", Type: elf.SHT_PROGBITS, Flags: exec, Addr: 0x1000, Data: make([]byte, 16)}}}
	for _, tc := range []struct {
		file, data string
		is         func(error) bool
		want       string // the message after "PATH: "
	}{
		{"text.elf", strings.Repeat("not an ELF\n", 8),
			func(err error) bool { return errors.Is(err, elfrel.ErrNotELF) },
			`bad magic number "not " at offset 0x0: not an ELF file`},
		{"lib.elf", string(dyn.Bytes()),
			func(err error) bool { var ue *elfrel.UnsupportedError; return errors.As(err, &ue) },
			`not a JIT object dump we can read: ELF type ET_DYN, want ET_REL`},
		{"jit-7.dump", strings.Repeat("x", 64),
			func(err error) bool { var fe *jitdump.FormatError; return errors.As(err, &fe) },
			`bad magic "xxxx": not a jitdump file`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errs := Load([]string{dir})
			if len(errs) != 1 {
				t.Fatalf("errors %v, want one", errs)
			}
			var oe *ObjectError
			if !errors.As(errs[0], &oe) || oe.File != path || !tc.is(errs[0]) {
				t.Errorf("error %#v is not an *ObjectError for %s wrapping the reader's typed error", errs[0], path)
			}
			if got, want := errs[0].Error(), path+": "+tc.want; got != want {
				t.Errorf("message\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestLoadSkipsFIFO: a FIFO named like a JIT file (anyone who can write
// beside a profile can make one) is reported, not opened for a read that
// would never end.
func TestLoadSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.elf", "y.meta", "perf-1.map", "jit-1.dump"} {
		if err := mkfifo(filepath.Join(dir, name)); err != nil {
			t.Skip("mkfifo:", err)
		}
	}
	_, errs := Load([]string{dir})
	if len(errs) != 4 {
		t.Fatalf("errors %v, want 4 (one per FIFO)", errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "no y.elf beside it") {
			t.Errorf("error %v does not say what is wrong", err)
		}
	}
}

// TestParseLimit: a gzipped profile that decompresses past the limit is
// an error saying so, whatever its header claims, and one under it
// parses.
func TestParseLimit(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(make([]byte, 5<<20)) // 5 MiB of zeros: a few KiB of gzip
	zw.Close()
	if _, _, err := ParseLimit(buf.Bytes(), 1<<20); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "-max_profile_mb") {
		t.Errorf("5 MiB under a 1 MiB limit: %v", err)
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	var pb bytes.Buffer
	if err := p.Write(&pb); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ParseLimit(pb.Bytes(), 1<<20); err != nil {
		t.Errorf("a small profile: %v", err)
	}
}

// TestByteBudget: the bytes taken at once never exceed the budget, a
// request larger than the budget takes it all (and runs alone), and every
// request is served.
func TestByteBudget(t *testing.T) {
	b := newByteBudget(100)
	var mu sync.Mutex
	inFlight, peak := int64(0), int64(0)
	var wg sync.WaitGroup
	for _, n := range []int64{60, 60, 30, 500, 10, 0, 100, 45, 55} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took := b.acquire(n)
			if took != min(n, 100) {
				t.Errorf("acquire(%d) took %d", n, took)
			}
			mu.Lock()
			inFlight += took
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inFlight -= took
			mu.Unlock()
			b.release(took)
		}()
	}
	wg.Wait()
	if peak > 100 || b.free != 100 {
		t.Errorf("peak %d bytes in flight (budget 100), %d free at the end", peak, b.free)
	}
}

// TestMetaLongerThanObject: a .meta file lists the sections of its ELF
// object, each once; one listing far more (a million entries) is refused
// at the bound, quickly, naming both files, and the object left out
// (elftest adds .shstrtab: the object has 2 sections).
func TestMetaLongerThanObject(t *testing.T) {
	exec := elf.SHF_ALLOC | elf.SHF_EXECINSTR
	obj := elftest.File{Sections: []elftest.Section{{Name: ".text", Type: elf.SHT_PROGBITS, Flags: exec, Addr: 0x7f0000001000, Data: make([]byte, 64)}}}
	const entry = `{"name":".text","start":0,"size":64},`
	for _, tc := range []struct {
		name    string
		entries int
		want    string // "" for no error
	}{
		{"as many as the bound", 64, ""},
		{"one more", 65, "x.meta: lists more than 64 sections; x.elf has 2"},
		{"a million", 1_000_000, "x.meta: lists more than 64 sections; x.elf has 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.elf"), obj.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			meta := `{"sections":[` + strings.Repeat(entry, tc.entries-1) + `{"name":".text","start":139637976731648,"size":64}]}`
			if err := os.WriteFile(filepath.Join(dir, "x.meta"), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errs := Load([]string{dir})
			switch {
			case tc.want == "" && len(errs) != 0:
				t.Errorf("errors %v, want none", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.HasSuffix(errs[0].Error(), tc.want)):
				t.Errorf("errors %v, want one ending %q", errs, tc.want)
			}
		})
	}
}
