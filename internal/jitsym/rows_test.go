package jitsym

import (
	"encoding/binary"
	"slices"
	"testing"
)

// decodeRows returns every row of an encoded sequence.
func decodeRows(data []byte) []row {
	nck, n := binary.Uvarint(data)
	data = data[n+int(nck)*checkpointSize:]
	var rows []row
	var r row
	for len(data) > 0 {
		r, n = decodeRow(data, r)
		rows, data = append(rows, r), data[n:]
	}
	return rows
}

// rowAddrs returns the address of every row of s.
func (s *Symbolizer) rowAddrs() []uint64 {
	var addrs []uint64
	for _, q := range s.seqs {
		for _, r := range decodeRows(s.lines[q.start:q.end]) {
			addrs = append(addrs, q.lo+uint64(r.off))
		}
	}
	return addrs
}

func TestRowEncoding(t *testing.T) {
	for _, n := range []int{0, 1, 2, checkEvery, checkEvery + 1, 3*checkEvery + 5} {
		var rows []row
		off, line := uint32(0), uint32(100)
		for i := range n {
			rows = append(rows, row{off: off, line: line, file: uint16(i % 3), col: uint16(i * 7 % 200)})
			off += uint32(1 + i%5)
			if i%4 == 3 {
				line -= 7 // lines go back too
			} else {
				line += uint32(i % 3)
			}
		}
		if n > 2 {
			rows[n-1].off = 1<<32 - 1 // the largest offset
			rows[n-1].line = 1<<32 - 1
			rows[n-1].file, rows[n-1].col = 1<<16-1, 1<<16-1
		}
		data := appendRows([]byte{0xff}, rows)[1:] // not at the start of its buffer
		if got := decodeRows(data); !slices.Equal(got, rows) {
			t.Fatalf("%d rows: decoded %v, want %v", n, got, rows)
		}
		// Boundaries: each row's offset, the one before the next, the
		// one after the last.
		for i, r := range rows {
			tests := []struct {
				off  uint32
				want row
			}{{off: r.off, want: r}}
			if i+1 < len(rows) && rows[i+1].off > r.off+1 {
				tests = append(tests, struct {
					off  uint32
					want row
				}{off: rows[i+1].off - 1, want: r})
			}
			if i+1 == len(rows) && r.off < 1<<32-1 {
				tests = append(tests, struct {
					off  uint32
					want row
				}{off: r.off + 1, want: r})
			}
			for _, tt := range tests {
				if got, ok := rowAt(data, tt.off); !ok || got != tt.want {
					t.Errorf("%d rows: rowAt(%d) = %v, %v; want %v", n, tt.off, got, ok, tt.want)
				}
			}
		}
		if _, ok := rowAt(data, 0); ok != (n > 0) {
			t.Errorf("%d rows: rowAt(0) ok = %v", n, ok)
		}
	}
}
