package gopclntab

import (
	"os"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// debianGo is Debian 12's go command (golang-1.19-go): a stripped Go 1.19
// binary of 10.7 MB with a 2.7 MB table of 10,851 functions.
const debianGo = "/usr/lib/go-1.19/bin/go"

func openDebianGo(b *testing.B) *elfrel.File {
	b.Helper()
	if _, err := os.Stat(debianGo); err != nil {
		testenv.Missing(b, debianGo, "apt-get install golang-1.19-go")
	}
	f, err := elfrel.Open(debianGo)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkOpenELF reads the table of a real Go binary and finds its
// module data: the cost paid once per binary per run.
func BenchmarkOpenELF(b *testing.B) {
	f := openDebianGo(b)
	defer f.Close()
	b.ReportAllocs()
	for range b.N {
		if _, err := OpenELF(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrames looks up addresses spread over the binary's functions:
// the cost per sampled address.
func BenchmarkFrames(b *testing.B) {
	f := openDebianGo(b)
	defer f.Close()
	t, err := OpenELF(f)
	if err != nil {
		b.Fatal(err)
	}
	var addrs []uint64
	for _, fn := range t.Funcs() {
		for a := fn.Entry; a < fn.End; a += 97 {
			addrs = append(addrs, a)
		}
	}
	var frames []Frame
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		frames = t.AppendFrames(frames[:0], addrs[i%len(addrs)])
	}
}
