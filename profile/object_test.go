package profile

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/elftest"
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
