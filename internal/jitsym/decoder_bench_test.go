package jitsym

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// libstdcxxDebug is the -g build of libstdc++ that Debian's
// libstdc++6-12-dbg installs: 11 MB, 4.2 MB of .debug_info, GCC's DWARF 5.
const libstdcxxDebug = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"

// BenchmarkDecoders compares the two ways of reading a real binary's
// DWARF: this package's index (every compile unit, function, inlined call
// and line row, ready for lookups) against Go's debug/dwarf doing less,
// merely decoding every entry and every line-table row once, without
// keeping anything. See doc/performance.md for the numbers and why the
// index is kept.
func BenchmarkDecoders(b *testing.B) {
	if _, err := os.Stat(libstdcxxDebug); err != nil {
		testenv.Missing(b, libstdcxxDebug, "apt-get install libstdc++6-12-dbg")
	}
	b.Run("jitsym-index", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			f, err := elfrel.Open(libstdcxxDebug)
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(f)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
			s.Close()
		}
	})
	b.Run("debug-dwarf-walk", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			f, err := elf.Open(libstdcxxDebug)
			if err != nil {
				b.Fatal(err)
			}
			d, err := f.DWARF()
			if err != nil {
				b.Fatal(err)
			}
			r := d.Reader()
			entries, rows := 0, 0
			for {
				e, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if e == nil {
					break
				}
				entries++
				if e.Tag == dwarf.TagCompileUnit {
					lr, err := d.LineReader(e)
					if err != nil {
						b.Fatal(err)
					}
					if lr != nil {
						var le dwarf.LineEntry
						for lr.Next(&le) == nil {
							rows++
						}
					}
				}
			}
			f.Close()
			if entries == 0 || rows == 0 {
				b.Fatalf("%d entries, %d rows", entries, rows)
			}
		}
	})
}
