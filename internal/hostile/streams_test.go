package hostile

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// countZeros reads r to its end, failing on a byte that is not zero, and
// returns how many it read.
func countZeros(t *testing.T, r io.Reader) int64 {
	t.Helper()
	buf := make([]byte, 1<<16)
	var n int64
	for {
		k, err := r.Read(buf)
		for _, c := range buf[:k] {
			if c != 0 {
				t.Fatalf("byte %d is %#x, want 0", n, c)
			}
		}
		n += int64(k)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", n, err)
		}
	}
}

func TestZlibZeros(t *testing.T) {
	for _, k := range []uint64{0, 1, 7, 8, 9, 1000, 1 << 16} {
		z := ZlibZeros(k)
		r, err := zlib.NewReader(bytes.NewReader(z)) // checks the Adler-32 at the end
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if got, want := countZeros(t, r), int64(1+258*k); got != want {
			t.Errorf("k=%d: got %d zeros, want %d", k, got, want)
		}
		if k >= 1<<16 && float64(1+258*k)/float64(len(z)) < 1000 {
			t.Errorf("k=%d: %d bytes for %d zeros, want 1,000 or more a byte", k, len(z), 1+258*k)
		}
	}
}

func TestZstdZeros(t *testing.T) {
	for _, n := range []uint64{0, 1, 128 << 10, 128<<10 + 1, 10 << 20} {
		d, err := zstd.NewReader(bytes.NewReader(ZstdZeros(n)))
		if err != nil {
			t.Fatal(err)
		}
		if got := countZeros(t, d); got != int64(n) {
			t.Errorf("n=%d: got %d zeros", n, got)
		}
		d.Close()
	}
}
