package jitsnap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestXXHash64Listener: the dump listener named the checked-in objects
// after llvm::xxHash64 of their bytes, which is XXH64 with seed 0
// (github.com/cespare/xxhash/v2): hashing them whole and in pieces of
// every alignment gives those names, as jitsnap names its copies.
func TestXXHash64Listener(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "jit", "*.elf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no checked-in objects: %v", err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ElfExt)
		if got := fmt.Sprintf("%016x", xxhash.Sum64(data)); !strings.HasSuffix(name, "-"+got) {
			t.Errorf("%s: xxHash64 %s", name, got)
		}
		for _, piece := range []int{1, 7, 31, 32, 33, 4097} {
			d := xxhash.New()
			for b := data; len(b) > 0; {
				n := min(piece, len(b))
				d.Write(b[:n])
				b = b[n:]
			}
			if got := fmt.Sprintf("%016x", d.Sum64()); !strings.HasSuffix(name, "-"+got) {
				t.Errorf("%s: in pieces of %d bytes, xxHash64 %s", name, piece, got)
			}
		}
	}
}
