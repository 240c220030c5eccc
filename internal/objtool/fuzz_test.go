package objtool

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// FuzzObjFile feeds arbitrary files to the object tool as a binary of
// each mapping kind and asks every question pprof asks: no input may
// panic or hang, and every answer is bounded by the file.
func FuzzObjFile(f *testing.F) {
	root := testenv.RepoRoot(f)
	for _, seed := range []string{
		"testdata/mcjit/golden/bin/libleaf.so",
		"testdata/mcjit/golden/jit",
	} {
		path := filepath.Join(root, seed)
		entries := []string{path}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			entries, _ = filepath.Glob(filepath.Join(path, "*.elf"))
		}
		for _, e := range entries {
			if data, err := os.ReadFile(e); err == nil && len(data) < 1<<20 {
				f.Add(data, uint64(0x500000000710))
				// Taken for a Go binary (golisting.go): its build ID
				// note's section renamed as the Go linker names its own.
				if goNote := bytes.Replace(data, []byte(".note.gnu.build-id\x00"), []byte(".note.go.buildid\x00\x00\x00"), 1); !bytes.Equal(goNote, data) {
					f.Add(goNote, uint64(0x500000000710))
				}
			}
		}
	}
	// Other containers, read with the standard library.
	foreign, _ := filepath.Glob("testdata/foreign/*")
	for _, e := range foreign {
		if data, err := os.ReadFile(e); err == nil && !strings.HasSuffix(e, ".sh") && !strings.HasSuffix(e, ".md") {
			f.Add(data, uint64(0x140001004))
			f.Add(data, uint64(4))
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"), uint64(0))
	f.Add([]byte("\x7fELF\x01\x01\x01"), uint64(0))
	f.Add([]byte("\xca\xfe\xba\xbe\x00\x00\x00\x02"), uint64(0))
	f.Add([]byte("MZ\x90\x00"), uint64(0))
	rx := regexp.MustCompile(".")
	// One file, rewritten for each input, and one empty debug directory:
	// inputs run one after another in a fuzzing process, and creating
	// directories and files for each took most of the time.
	dir, debugDir := f.TempDir(), f.TempDir()
	path := filepath.Join(dir, "bin")
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tool := New(Options{DebugDirs: []string{debugDir}})
		defer tool.Close()
		for _, m := range [][3]uint64{{0, ^uint64(0), 0}, {0x400000, 0x500000, 0}, {0x7f0000000000, 0x7f0000100000, 0x1000}} {
			of, err := tool.Open(path, m[0], m[1], m[2], "")
			if err != nil {
				continue
			}
			a := m[0] + addr%max(m[1]-m[0], 1)
			of.ObjAddr(a)
			of.SourceLine(a)
			syms, _ := of.Symbols(rx, 0)
			for i, s := range syms {
				if i == 4 {
					break
				}
				tool.Disasm(path, s.Start, min(s.End, s.Start+4096), i%2 == 0)
			}
			tool.Disasm(path, addr, addr+64, false)
		}
	})
}
