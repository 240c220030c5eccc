package objtool

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// libstdcxxDebug is the -g build of libstdc++ from libstdc++6-12-dbg
// (11 MB, 4.2 MB of .debug_info).
const libstdcxxDebug = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"

// benchBinary returns the binary the native benchmarks read: libstdc++'s
// -g build, or the file $OBJTOOL_BENCH_BINARY names (bench/native.sh's
// executable, say: build/bench/native-55000/synth-exe).
func benchBinary(b *testing.B) string {
	b.Helper()
	if path := os.Getenv("OBJTOOL_BENCH_BINARY"); path != "" {
		return path
	}
	if _, err := os.Stat(libstdcxxDebug); err != nil {
		testenv.Missing(b, libstdcxxDebug, "apt-get install libstdc++6-12-dbg")
	}
	return libstdcxxDebug
}

// BenchmarkOpenNative opens a large -g shared library and builds its
// index, as the first SourceLine of a run does: the cost paid once per
// binary per run.
func BenchmarkOpenNative(b *testing.B) {
	path := benchBinary(b)
	b.ReportAllocs()
	for range b.N {
		tool := New(Options{})
		f, err := tool.Open(path, 0, ^uint64(0), 0, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.SourceLine(0); err != nil {
			b.Fatal(err)
		}
		tool.Close()
	}
}

// BenchmarkSourceLineNative looks up addresses spread over the library's
// code, the index built: the cost per sampled address.
func BenchmarkSourceLineNative(b *testing.B) {
	path := benchBinary(b)
	ef, err := elfrel.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var addrs []uint64
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 {
			for a := s.Addr; a < s.Addr+s.Size; a += 97 {
				addrs = append(addrs, a)
			}
		}
	}
	ef.Close()
	tool := New(Options{})
	defer tool.Close()
	f, err := tool.Open(path, 0, ^uint64(0), 0, "")
	if err != nil {
		b.Fatal(err)
	}
	f.SourceLine(addrs[0])
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.SourceLine(addrs[i%len(addrs)]); err != nil {
			b.Fatal(err)
		}
	}
}
