// Package hostile builds object files that follow their formats'
// specifications (Mach-O, PE, ELF) closely enough for a reader to accept
// their headers, and are hostile to it: tables that alias one range of
// the file (fat members, relocations, symbol and section names), and
// compressed sections that decompress to gigabytes. They are what the
// root package's hostile corpus (TestHostileObjects) runs pprof on and
// what the object tool's fuzzers are seeded with; each function says
// what a reader that trusts the file would allocate.
//
// Everything is built in memory from a few parameters, in milliseconds:
// no compressor runs over the data the streams stand for.
package hostile

import (
	"encoding/binary"
)

// bitWriter writes the least significant bits first, as DEFLATE packs
// its fields.
type bitWriter struct {
	out  []byte
	acc  uint64
	bits uint
}

func (w *bitWriter) write(v uint64, n uint) {
	w.acc |= v << w.bits
	w.bits += n
	for w.bits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.bits -= 8
	}
}

// writeCode writes a Huffman code of n bits, which DEFLATE packs most
// significant bit first.
func (w *bitWriter) writeCode(code uint64, n uint) {
	var rev uint64
	for i := uint(0); i < n; i++ {
		rev = rev<<1 | (code>>i)&1
	}
	w.write(rev, n)
}

// zeros appends n zero bits.
func (w *bitWriter) zeros(n uint64) {
	for ; n > 0 && w.bits != 0; n-- {
		w.write(0, 1)
	}
	w.out = append(w.out, make([]byte, n/8)...)
	w.write(0, uint(n%8))
}

func (w *bitWriter) flush() []byte {
	if w.bits > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.bits = 0, 0
	}
	return w.out
}

// ZlibZeros returns a zlib stream (RFC 1950) of 1+258*k zero bytes, the
// densest DEFLATE allows: one dynamic Huffman block whose only
// length/distance pair, <258, 1>, costs two bits, so that it holds about
// 1,032 bytes per byte. ZlibZeros(k) is k/4 bytes long plus a few.
func ZlibZeros(k uint64) []byte {
	var w bitWriter
	w.out = []byte{0x78, 0x01} // CM 8, CINFO 7, FCHECK; no dictionary
	w.write(1, 1)              // BFINAL
	w.write(2, 2)              // BTYPE: dynamic Huffman codes
	w.write(286-257, 5)        // HLIT: literal/length codes 0..285
	w.write(0, 5)              // HDIST: one distance code (the count less 1)
	w.write(18-4, 4)           // HCLEN: code length codes up to order index 17
	// Code length code lengths, in DEFLATE's order: symbol 18 (a run of
	// zeros) 1 bit, symbols 2 and 1 2 bits each.
	order := []int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1}
	clen := map[int]uint64{18: 1, 2: 2, 1: 2}
	for _, sym := range order {
		w.write(clen[sym], 3)
	}
	// Their canonical codes: 18 is 0, 1 is 10, 2 is 11.
	cl := func(sym int) {
		switch sym {
		case 18:
			w.writeCode(0, 1)
		case 1:
			w.writeCode(2, 2)
		case 2:
			w.writeCode(3, 2)
		}
	}
	run := func(n int) { // n zero lengths, 11 to 138
		cl(18)
		w.write(uint64(n-11), 7)
	}
	// Literal/length code lengths: 0 and 256 (end of block) 2 bits, 285
	// (length 258) 1 bit; the single distance code 0 (distance 1) 1 bit.
	cl(2)
	run(138)
	run(117)
	cl(2)
	run(28)
	cl(1)
	cl(1)
	// Canonical codes: 285 is 0, literal 0 is 10, 256 is 11; distance 0
	// is 0. A literal zero, then k copies of the byte before: 0 and 0.
	w.writeCode(2, 2)
	w.zeros(2 * k)
	w.writeCode(3, 2)
	out := w.flush()
	// Adler-32 of n zero bytes: A stays 1, B adds it n times.
	n := 1 + 258*k
	return binary.BigEndian.AppendUint32(out, uint32(n%65521)<<16|1)
}

// ZstdZeros returns a Zstandard frame (RFC 8878) of n zero bytes: RLE
// blocks of 128 KiB, 4 bytes each, so that it holds 32,768 bytes per
// byte; the frame does not say its size.
func ZstdZeros(n uint64) []byte {
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	out = append(out, 0x00, 7<<3) // no content size, window 2^(10+7)
	const block = 128 << 10
	for n > 0 || len(out) == 6 {
		size := min(n, block)
		n -= size
		last := uint32(0)
		if n == 0 {
			last = 1
		}
		h := last | 1<<1 | uint32(size)<<3 // Block_Type 1: RLE
		out = append(out, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return out
}
