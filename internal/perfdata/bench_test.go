package perfdata

import (
	"bytes"
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
