package jitsym

import "encoding/binary"

// Line table rows take most of the index, so each sequence's are kept
// encoded, in Symbolizer.lines[sequence.start:sequence.end], about 5 bytes
// a row instead of 12:
//
//	uvarint  number of checkpoints, n
//	n × 16   checkpoints: off, line, pos (uint32), file, col (uint16),
//	         little-endian: the row after every checkEvery rows and where
//	         the row after it starts, from the start of the rows
//	rows     each as uvarint off delta, varint line delta, uvarint file,
//	         uvarint col, the deltas from the row before (or from 0)
//
// A lookup binary-searches the checkpoints and decodes at most
// checkEvery-1 rows after the one it finds.

// A row is one line table row. Of several rows at the same address only
// the last is kept, since llvm-symbolizer picks the last row at or before
// the address. Like LLVM's DWARFDebugLine::Row, file and column are 16-bit.
type row struct {
	off  uint32 // address, from the start of its sequence
	line uint32
	file uint16
	col  uint16
}

const (
	checkEvery     = 16
	checkpointSize = 16
)

// maxRowBytes bounds the bytes appendRows takes per row: four varints of
// at most 5, 5, 3 and 3 bytes, and a share of a checkpoint.
const maxRowBytes = 5 + 5 + 3 + 3 + checkpointSize/checkEvery

// appendRows appends the encoding of one sequence's rows, in address
// order from offset 0, to dst.
func appendRows(dst []byte, rows []row) []byte {
	nck := 0
	if len(rows) > 0 {
		nck = (len(rows) - 1) / checkEvery
	}
	dst = binary.AppendUvarint(dst, uint64(nck))
	cks := len(dst)
	for range nck * checkpointSize {
		dst = append(dst, 0)
	}
	start := len(dst)
	var prev row
	for i, r := range rows {
		dst = binary.AppendUvarint(dst, uint64(r.off-prev.off))
		dst = binary.AppendVarint(dst, int64(r.line)-int64(prev.line))
		dst = binary.AppendUvarint(dst, uint64(r.file))
		dst = binary.AppendUvarint(dst, uint64(r.col))
		prev = r
		if i > 0 && i%checkEvery == 0 {
			ck := dst[cks+(i/checkEvery-1)*checkpointSize:]
			le := binary.LittleEndian
			le.PutUint32(ck, r.off)
			le.PutUint32(ck[4:], r.line)
			le.PutUint32(ck[8:], uint32(len(dst)-start))
			le.PutUint16(ck[12:], r.file)
			le.PutUint16(ck[14:], r.col)
		}
	}
	return dst
}

// rowAt returns the last row at or before offset off in the encoded rows
// of a sequence, whose first row is at offset 0; ok is false if it has
// no rows.
func rowAt(data []byte, off uint32) (r row, ok bool) {
	nck, n := binary.Uvarint(data)
	cks := data[n : n+int(nck)*checkpointSize]
	rows := data[n+len(cks):]
	lo, hi := 0, int(nck) // the last checkpoint at or before off
	le := binary.LittleEndian
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le.Uint32(cks[m*checkpointSize:]) > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	pos := 0
	if lo > 0 {
		ck := cks[(lo-1)*checkpointSize:]
		r = row{off: le.Uint32(ck), line: le.Uint32(ck[4:]), file: le.Uint16(ck[12:]), col: le.Uint16(ck[14:])}
		pos, ok = int(le.Uint32(ck[8:])), true
	}
	for pos < len(rows) {
		if b := rows[pos:]; len(b) >= 4 && (b[0]|b[1]|b[2]|b[3])&0x80 == 0 {
			// Every field in one byte: the usual row.
			if ok && r.off+uint32(b[0]) > off {
				break
			}
			l := int64(b[1]>>1) ^ -int64(b[1]&1) // zigzag, as binary.Varint
			r = row{off: r.off + uint32(b[0]), line: uint32(int64(r.line) + l), file: uint16(b[2]), col: uint16(b[3])}
			pos, ok = pos+4, true
			continue
		}
		next, n := decodeRow(rows[pos:], r)
		if ok && next.off > off {
			break
		}
		r, pos, ok = next, pos+n, true
	}
	return r, ok
}

// decodeRow decodes the row at the start of b, which follows prev, and
// returns it and its length.
func decodeRow(b []byte, prev row) (row, int) {
	d, n := uvarint(b)
	l, k := binary.Varint(b[n:])
	n += k
	file, k := uvarint(b[n:])
	n += k
	col, k := uvarint(b[n:])
	return row{off: prev.off + uint32(d), line: uint32(int64(prev.line) + l), file: uint16(file), col: uint16(col)}, n + k
}

// uvarint is binary.Uvarint with a fast path for one byte, the usual
// length here.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}
