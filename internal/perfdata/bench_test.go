package perfdata

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkRecords decodes every record of a real recording (the golden
// single.data: 2,240 records, 180 KB of them), as perf record writes it,
// compressed as perf record -z does, and as pipe mode writes it.
func BenchmarkRecords(b *testing.B) {
	plain := goldenRecording(b)
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"file", plain},
		{"zstd", compressRecording(b, plain, 5, 512<<10, 0xfff0-16, RecordCompressed)},
		{"pipe", toPipe(b, plain)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := Open(bytes.NewReader(bc.data), int64(len(bc.data)), "x.data")
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if err := f.Records(func(r *Record) bool { n++; return true }); err != nil || n < 1955 {
					b.Fatalf("%d records, %v", n, err)
				}
			}
		})
	}
}

// BenchmarkProfile converts the recording into a profile (no files to
// read: its binary's mappings stay unsymbolized).
func BenchmarkProfile(b *testing.B) {
	plain := goldenRecording(b)
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(bytes.NewReader(plain), int64(len(plain)), "x.data")
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := f.Profile(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProfileRecording converts the recording $PERFDATA_BENCH_FILE
// (as bench/perfdata.sh makes them; skipped if unset) into a profile,
// unwinding its --call-graph dwarf stacks with the files it names or
// their copies in $PERFDATA_BENCH_BUILDID_DIR.
func BenchmarkProfileRecording(b *testing.B) {
	name := os.Getenv("PERFDATA_BENCH_FILE")
	if name == "" {
		b.Skip("PERFDATA_BENCH_FILE names no recording")
	}
	fd, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(fd, st.Size(), name)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := f.Profile(Options{BuildIDDir: os.Getenv("PERFDATA_BENCH_BUILDID_DIR")}); err != nil {
			b.Fatal(err)
		}
	}
}
