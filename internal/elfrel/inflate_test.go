package elfrel

import (
	"bytes"
	stdzlib "compress/zlib"
	"debug/elf"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zlib"
)

func newKlauspost(z []byte) (io.Reader, error) { return zlib.NewReader(bytes.NewReader(z)) }

// inflateStd decodes z with the standard library's zlib reader, the
// oracle of these tests.
func inflateStd(z []byte) ([]byte, error) {
	r, err := stdzlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, 64<<20))
}

// inflateOurs decodes z into a buffer of size bytes.
func inflateOurs(z []byte, size int) ([]byte, error) {
	out := make([]byte, size)
	f, err := newZlibInflater(z, out)
	if err != nil {
		return nil, err
	}
	n, err := f.inflate(size)
	if err == nil && n != size {
		err = errors.New("short")
	}
	return out, err
}

func deflate(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := stdzlib.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// testInputs are data of the kinds compressors make every block type of:
// nothing, random bytes (stored blocks), short text (fixed codes), long
// repetitive text, runs (distance 1), and a real debug section.
func testInputs(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var text strings.Builder
	for i := 0; text.Len() < 1<<20; i++ {
		text.WriteString("func f")
		text.WriteString(strings.Repeat("x", rng.IntN(40)))
		text.WriteString(" /usr/include/x86_64-linux-gnu/bits/types.h DW_TAG_subprogram\n")
	}
	in := map[string][]byte{
		"empty":  nil,
		"byte":   {42},
		"short":  []byte("hello, hello, hello"),
		"random": random,
		"text":   []byte(text.String()),
		"runs":   bytes.Repeat([]byte{0, 0, 0, 0, 0, 0, 0, 1, 2, 3}, 50000),
	}
	// A section of this machine's libc debug file, if it has one.
	if paths, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug"); len(paths) > 0 {
		for _, p := range paths[:min(len(paths), 20)] {
			if f, err := elf.Open(p); err == nil {
				if s := f.Section(".debug_line"); s != nil {
					if d, err := s.Data(); err == nil && len(d) > 100<<10 {
						in["debug_line"] = d
						f.Close()
						break
					}
				}
				f.Close()
			}
		}
	}
	return in
}

// TestInflater: every kind of input, compressed at every level, decodes
// to what the standard library decodes it to, at once and in steps
// (as a Prefix asks).
func TestInflater(t *testing.T) {
	for name, data := range testInputs(t) {
		for level := -2; level <= 9; level++ { // -2: Huffman codes only
			z := deflate(t, data, level)
			got, err := inflateOurs(z, len(data))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, level %d: %v, output equal: %v", name, level, err, bytes.Equal(got, data))
				continue
			}
			// In steps: each call gives at least what is asked.
			out := make([]byte, len(data))
			f, _ := newZlibInflater(z, out)
			for want := 0; want <= len(data); want += 1000 + want/2 {
				n, err := f.inflate(want)
				if err != nil || n < want || !bytes.Equal(out[:n], data[:n]) {
					t.Fatalf("%s, level %d: inflate(%d) = %d, %v", name, level, want, n, err)
				}
			}
			if n, err := f.inflate(len(data)); err != nil || n != len(data) {
				t.Fatalf("%s, level %d: to the end: %d, %v", name, level, n, err)
			}
		}
	}
}

// TestInflaterErrors: a stream cut anywhere, or with any of its bytes
// changed, or decoded into a buffer of another size, is an error,
// unless the standard library decodes it too, to the same bytes.
func TestInflaterErrors(t *testing.T) {
	data := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40) + "0123456789")
	for _, level := range []int{-2, 1, 9} {
		z := deflate(t, data, level)
		for cut := range len(z) {
			if _, err := inflateOurs(z[:cut], len(data)); err == nil {
				t.Errorf("level %d, cut at %d of %d bytes: no error", level, cut, len(z))
			}
		}
		for i := range z {
			for _, x := range []byte{1, 0x80, 0xff} {
				bad := bytes.Clone(z)
				bad[i] ^= x
				want, werr := inflateStd(bad)
				got, err := inflateOurs(bad, len(data))
				if err == nil && (werr != nil || !bytes.Equal(got, want)) {
					t.Errorf("level %d, byte %d ^ %#x: decoded, the standard library: %v", level, i, x, werr)
				}
			}
		}
		for _, size := range []int{0, len(data) - 1, len(data) + 1} {
			if _, err := inflateOurs(z, size); err == nil {
				t.Errorf("level %d: decoded into %d bytes, for %d", level, size, len(data))
			}
		}
	}
}

// FuzzInflater: whatever the stream, the inflater agrees with the
// standard library: the same bytes, or an error.
func FuzzInflater(f *testing.F) {
	for _, data := range [][]byte{nil, []byte("abcabcabcabcabc"), bytes.Repeat([]byte("xy"), 300)} {
		for _, level := range []int{-2, 0, 1, 9} {
			f.Add(deflate(f, data, level), len(data))
		}
	}
	f.Fuzz(func(t *testing.T, z []byte, size int) {
		if size < 0 || size > 1<<20 {
			return
		}
		want, werr := inflateStd(z)
		got, err := inflateOurs(z, size)
		switch {
		case err == nil && werr != nil:
			t.Fatalf("decoded %d bytes; the standard library: %v", size, werr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("decoded %d bytes, not the standard library's %d", size, len(want))
		case err != nil && werr == nil && len(want) == size:
			t.Fatalf("%v; the standard library decodes it to %d bytes", err, size)
		}
	})
}

// BenchmarkInflater decodes this machine's libc debug file's
// .debug_info, as the inflater, the standard library's zlib reader and
// klauspost/compress's (what decoded it before) do.
func BenchmarkInflater(b *testing.B) {
	paths, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug")
	var z []byte
	size := 0
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || st.Size() < 2<<20 {
			continue
		}
		f, err := Open(p)
		if err != nil {
			continue
		}
		l, err := f.DebugLoader()
		if err != nil {
			continue
		}
		if ds := l.sections[".debug_info"]; ds != nil && len(ds.members) == 1 && ds.members[0].zoff != 0 && !ds.members[0].zstd {
			m := ds.members[0]
			z = make([]byte, m.zsize)
			l.r.ReadAt(z, int64(m.zoff))
			size = int(m.size)
			break
		}
	}
	if z == nil {
		b.Skip("no debug file with a zlib .debug_info of 2 MB or more")
	}
	b.Run("inflater", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if _, err := inflateOurs(z, size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("std", func(b *testing.B) {
		b.SetBytes(int64(size))
		out := make([]byte, size)
		for b.Loop() {
			r, err := stdzlib.NewReader(bytes.NewReader(z))
			if err != nil {
				b.Fatal(err)
			}
			if err := readExactly(r, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		b.SetBytes(int64(size))
		out := make([]byte, size)
		for b.Loop() {
			r, err := newKlauspost(z)
			if err != nil {
				b.Fatal(err)
			}
			if err := readExactly(r, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
