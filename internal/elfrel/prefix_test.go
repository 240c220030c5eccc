package elfrel

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPrefix: the start of a section read with Prefix, compressed with
// zlib or Zstandard or not, is the start of what Section reads, for
// reads that grow, repeat and shrink; and a section with relocations
// cannot be read in part.
func TestPrefix(t *testing.T) {
	testenv.Long(t, "compiles C with GCC and clang")
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	var code bytes.Buffer
	for i := range 800 { // .debug_info of several reads ahead
		fmt.Fprintf(&code, "static int v%d(int x) { return x * %d + 1; }\nint f%d(int x) { return v%d(x); }\n", i, i, i, i)
	}
	testenv.WriteFile(t, src, code.Bytes())
	for _, tc := range []struct {
		name  string
		cc    string
		args  []string
		whole bool // Prefix refuses: relocations
	}{
		{name: "uncompressed", args: []string{"-shared", "-fPIC"}},
		{name: "zlib", args: []string{"-shared", "-fPIC", "-gz=zlib"}},
		{name: "zstd", cc: "clang-19", args: []string{"-shared", "-fPIC", "-gz=zstd", "-gdwarf-aranges"}},
		{name: "relocatable", args: []string{"-c"}, whole: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			cc := gcc
			if tc.cc != "" {
				cc = testenv.Tool(t, tc.cc, tc.cc)
			}
			cmd := exec.Command(cc, append([]string{"-g", "-O1", "-o", out, src}, tc.args...)...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
			}
			f, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			l, err := f.DebugLoaderWith(".debug_aranges")
			if err != nil {
				t.Fatal(err)
			}
			if !l.Has(".debug_aranges") {
				t.Errorf("no .debug_aranges loaded")
			}
			p, err := l.Prefix(".debug_info")
			if tc.whole {
				if err == nil {
					t.Fatalf("Prefix of a section with relocations: no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := l.Section(".debug_info")
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 48<<10 {
				t.Fatalf(".debug_info of %d bytes, want over 48 KiB", len(want))
			}
			if got := p.Size(); got != uint64(len(want)) {
				t.Errorf("Size() = %d, want %d", got, len(want))
			}
			for _, n := range []uint64{0, 1, 100, 100, 40<<10 + 3, 10, uint64(len(want)) - 1, uint64(len(want)), uint64(len(want)) + 10} {
				got, err := p.Read(n)
				if err != nil {
					t.Fatalf("Read(%d): %v", n, err)
				}
				if w := want[:min(n, uint64(len(want)))]; !bytes.Equal(got, w) {
					t.Errorf("Read(%d): %d bytes, not the section's first %d", n, len(got), len(w))
				}
			}
			if p, err := l.Prefix(".debug_nothing"); p != nil || err != nil {
				t.Errorf("Prefix of no section: %v, %v; want nil, nil", p, err)
			}
		})
	}
}
