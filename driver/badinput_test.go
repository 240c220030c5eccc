package driver

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// The two JIT objects of the checked-in MCJIT run: part 1 has a single
// .text section, part 2 one .text.FUNC section per function.
const (
	objA = "workload.c-1346edd604499fbd"
	objB = "workload.c-df2284e66d575719"
)

// testUI records what pprof says; it never reads commands.
type testUI struct {
	mu   sync.Mutex
	msgs []string
}

func (u *testUI) ReadLine(string) (string, error) { return "", io.EOF }
func (u *testUI) Print(args ...any)               { u.add(args) }
func (u *testUI) PrintErr(args ...any)            { u.add(args) }
func (u *testUI) IsTerminal() bool                { return false }
func (u *testUI) WantBrowser() bool               { return false }
func (u *testUI) SetAutoComplete(func(string) string) {
}

func (u *testUI) add(args []any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.msgs = append(u.msgs, strings.TrimSuffix(fmt.Sprint(args...), "\n"))
}

// mentioning returns the messages that contain s.
func (u *testUI) mentioning(s string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, m := range u.msgs {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// memWriter keeps the files pprof writes in memory.
type memWriter struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
}

type memFile struct{ *bytes.Buffer }

func (memFile) Close() error { return nil }

func (w *memWriter) Open(name string) (io.WriteCloser, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := &bytes.Buffer{}
	w.files[name] = b
	return memFile{b}, nil
}

// goldenRun returns the directory of the checked-in MCJIT run.
func goldenRun(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden")
}

// copyObjects copies the golden JIT objects into a new directory.
func copyObjects(t *testing.T) string {
	t.Helper()
	src := filepath.Join(goldenRun(t), "jit")
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestBadJITInput runs pprof through this package's API on the real
// MCJIT heap profile with one thing wrong at a time. Each case must give
// exactly one warning naming the file at fault and the problem; the
// profile must still load, the intact object and libleaf.so must still be
// symbolized, and pprof must succeed exactly when upstream pprof does on
// the same profile.
func TestBadJITInput(t *testing.T) {
	golden := goldenRun(t)
	t.Setenv("PPROF_BINARY_PATH", filepath.Join(golden, "bin"))
	heapNoMap := filepath.Join(t.TempDir(), "heap-nomap.prof")
	writeWithoutMemoryMap(t, filepath.Join(golden, "heap.prof"), heapNoMap)

	for _, tc := range []struct {
		name string
		// setup breaks a copy of the objects in dir and returns the
		// -jit_dir value and the file the warning must name.
		setup   func(t *testing.T, dir string) (jitDir, culprit string)
		prof    string
		warning string // regexp the one warning must match
		// Whether each object's code is still symbolized.
		symA, symB, symLeaf bool
	}{
		{
			name: "missing .elf for a .meta",
			setup: func(t *testing.T, dir string) (string, string) {
				rm(t, filepath.Join(dir, objA+".elf"))
				return dir, objA + ".meta"
			},
			warning: `no ` + objA + `\.elf beside it`,
			symB:    true, symLeaf: true,
		},
		{
			name: "malformed JSON",
			setup: func(t *testing.T, dir string) (string, string) {
				write(t, filepath.Join(dir, objA+".meta"), `{"sections": [{"name": ".text", "start": 12`)
				return dir, objA + ".meta"
			},
			warning: `malformed JSON`,
			symB:    true, symLeaf: true,
		},
		{
			name: "meta sections that disagree with the ELF",
			setup: func(t *testing.T, dir string) (string, string) {
				path := filepath.Join(dir, objB+".meta")
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				write(t, path, strings.Replace(string(data), `"size":476`, `"size":480`, 1))
				return dir, objB + ".meta"
			},
			warning: `section \.text\.jit_sort_records at 0x[0-9a-f]+ size 0x1e0 disagrees with ` + objB + `\.elf: the ELF has it at 0x[0-9a-f]+ size 0x1dc`,
			symA:    true, symLeaf: true,
		},
		{
			name: "truncated ELF",
			setup: func(t *testing.T, dir string) (string, string) {
				path := filepath.Join(dir, objA+".elf")
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				write(t, path, string(data[:len(data)/2]))
				return dir, objA + ".elf"
			},
			warning: `section header table .*(beyond|past|outside|exceeds|end of file|out of range)`,
			symB:    true, symLeaf: true,
		},
		{
			name: "not an ELF",
			setup: func(t *testing.T, dir string) (string, string) {
				write(t, filepath.Join(dir, objA+".elf"), strings.Repeat("this is not an ELF file\n", 10))
				return dir, objA + ".elf"
			},
			warning: `(?i)not an ELF|magic`,
			symB:    true, symLeaf: true,
		},
		{
			name: "a shared library given as JIT object",
			setup: func(t *testing.T, dir string) (string, string) {
				data, err := os.ReadFile(filepath.Join(golden, "bin", "libleaf.so"))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "libleaf.elf"), string(data))
				return dir, "libleaf.elf"
			},
			warning: `ET_DYN`,
			symA:    true, symB: true, symLeaf: true,
		},
		{
			name: "an executable given as JIT object",
			setup: func(t *testing.T, dir string) (string, string) {
				data, err := os.ReadFile(filepath.Join(golden, "bin", "jit_host"))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "host.elf"), string(data))
				return dir, "host.elf"
			},
			warning: `ET_EXEC`,
			symA:    true, symB: true, symLeaf: true,
		},
		{
			name: "zero-size sections",
			setup: func(t *testing.T, dir string) (string, string) {
				rm(t, filepath.Join(dir, objA+".meta"))
				zeroExecSections(t, filepath.Join(dir, objA+".elf"))
				return dir, objA + ".elf"
			},
			warning: `no loaded executable section with code`,
			symB:    true, symLeaf: true,
		},
		{
			name: "overlapping sections",
			setup: func(t *testing.T, dir string) (string, string) {
				for _, ext := range []string{".elf", ".meta"} {
					data, err := os.ReadFile(filepath.Join(dir, objA+ext))
					if err != nil {
						t.Fatal(err)
					}
					write(t, filepath.Join(dir, "zz-copy"+ext), string(data))
				}
				return dir, "zz-copy.elf"
			},
			warning: `section \.text \[0x[0-9a-f]+, 0x[0-9a-f]+\) overlaps section \.text .* of .*` + objA + `\.elf; the overlapping addresses are attributed to \.text`,
			symA:    true, symB: true, symLeaf: true,
		},
		{
			name: "empty directory",
			setup: func(t *testing.T, dir string) (string, string) {
				empty := filepath.Join(dir, "empty")
				if err := os.Mkdir(empty, 0o755); err != nil {
					t.Fatal(err)
				}
				return empty, "empty"
			},
			warning: `no JIT objects \(NAME\.elf, NAME\.meta, perf-\*\.map, jit-\*\.dump\) in this directory`,
			symLeaf: true,
		},
		{
			name: "unreadable file",
			setup: func(t *testing.T, dir string) (string, string) {
				path := filepath.Join(dir, objA+".elf")
				if os.Geteuid() == 0 {
					// Root reads any file: make it a symbolic link loop.
					rm(t, path)
					if err := os.Symlink(filepath.Base(path), path); err != nil {
						t.Fatal(err)
					}
				} else if err := os.Chmod(path, 0); err != nil {
					t.Fatal(err)
				}
				return dir, objA + ".elf"
			},
			warning: `permission denied|too many levels of symbolic links`,
			symB:    true, symLeaf: true,
		},
		{
			name: "a profile with no memory map",
			setup: func(t *testing.T, dir string) (string, string) {
				return dir, filepath.Base(heapNoMap)
			},
			prof:    heapNoMap,
			warning: `no memory map`,
			symA:    true, symB: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jitDir, culprit := tc.setup(t, copyObjects(t))
			prof := tc.prof
			if prof == "" {
				prof = filepath.Join(golden, "heap.prof")
			}
			ui := &testUI{}
			w := &memWriter{files: map[string]*bytes.Buffer{}}
			args := []string{"-proto", "-output", "out.pb.gz", "-sample_index=alloc_space", "-jit_dir", jitDir, prof}
			err := PProf(&Options{
				Flagset: NewFlagSet("pprof", args, flag.ContinueOnError),
				UI:      ui,
				Writer:  w,
			})

			upstream := exec.Command(testenv.UpstreamPProf(t), "-proto", "-output", filepath.Join(t.TempDir(), "x.pb.gz"), prof)
			upstreamErr := upstream.Run()
			var exitErr *exec.ExitError
			if upstreamErr != nil && !errors.As(upstreamErr, &exitErr) {
				t.Fatal(upstreamErr)
			}
			if (err == nil) != (upstreamErr == nil) {
				t.Fatalf("PProf error %v, upstream pprof error %v: want both to fail or both to succeed", err, upstreamErr)
			}

			warnings := ui.mentioning(culprit)
			if len(warnings) != 1 || !regexp.MustCompile(tc.warning).MatchString(warnings[0]) {
				t.Errorf("warnings naming %s: %q; want exactly one matching %q\nall messages: %q", culprit, warnings, tc.warning, ui.msgs)
			}
			for _, w := range warnings {
				t.Log(w)
			}
			if err != nil {
				return
			}
			p, perr := profile.Parse(w.files["out.pb.gz"])
			if perr != nil {
				t.Fatal(perr)
			}
			got := symbolized(p)
			for _, c := range []struct {
				what string
				want bool
			}{
				{what: "workload.c part 1 (" + objA + ")", want: tc.symA},
				{what: "workload.c part 2 (" + objB + ")", want: tc.symB},
				{what: "leaf.c", want: tc.symLeaf},
			} {
				if got[c.what] != c.want {
					t.Errorf("%s symbolized: %v, want %v", c.what, got[c.what], c.want)
				}
			}
		})
	}
}

// symbolized reports which code of the fixture has symbolized locations:
// part 1 of workload.c (jit_matmul is there), part 2 (jit_heap_round,
// jit_make_buffer) and leaf.c.
func symbolized(p *profile.Profile) map[string]bool {
	got := map[string]bool{}
	for _, l := range p.Location {
		for _, ln := range l.Line {
			switch ln.Function.Name {
			case "jit_matmul":
				got["workload.c part 1 ("+objA+")"] = true
			case "jit_heap_round", "jit_make_buffer":
				got["workload.c part 2 ("+objB+")"] = true
			}
			if strings.HasSuffix(ln.Function.Filename, "/leaf.c") {
				got["leaf.c"] = true
			}
		}
	}
	return got
}

func rm(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeWithoutMemoryMap copies a text legacy profile without its memory
// map section.
func writeWithoutMemoryMap(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("MAPPED_LIBRARIES:"))
	if i < 0 {
		t.Fatalf("%s has no memory map", src)
	}
	write(t, dst, string(data[:i]))
}

// zeroExecSections sets sh_size to 0 in the header of every executable
// section of a 64-bit little-endian ELF file.
func zeroExecSections(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(data[0x3a:]))
	for i, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 {
			binary.LittleEndian.PutUint64(data[shoff+uint64(i)*shentsize+0x20:], 0)
		}
	}
	write(t, path, string(data))
}
