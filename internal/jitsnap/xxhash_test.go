package jitsnap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

func TestXXHash64(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		// Reference values of XXH64 with seed 0.
		{in: "", want: 0xef46db3751d8e999},
		{in: "a", want: 0xd24ec4f1a98c6e5b},
		{in: "abc", want: 0x44bc2cf5ad770999},
		{in: "Nobody inspects the spammish repetition", want: 0xfbcea83c8a378bf1},
	} {
		if got := xxHash64([]byte(tt.in)); got != tt.want {
			t.Errorf("xxHash64(%q): got %016x, want %016x", tt.in, got, tt.want)
		}
	}
}

// TestXXHash64Listener: the dump listener named the checked-in objects
// after llvm::xxHash64 of their bytes; hashing them whole and in pieces
// of every alignment gives those names.
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
		if got := fmt.Sprintf("%016x", xxHash64(data)); !strings.HasSuffix(name, "-"+got) {
			t.Errorf("%s: xxHash64 %s", name, got)
		}
		for _, piece := range []int{1, 7, 31, 32, 33, 4097} {
			var d xxDigest
			d.Reset()
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
