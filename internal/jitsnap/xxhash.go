package jitsnap

import (
	"encoding/binary"
	"math/bits"
)

// xxHash64 constants (XXH64, Yann Collet's reference implementation).
const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

// xxHash64 returns the 64-bit xxHash of b with seed 0, the function
// llvm::xxHash64 computes. The dump listener (jitlistener/) names its
// files after it, so a snapshot of the same object gets the same name.
func xxHash64(b []byte) uint64 {
	var d xxDigest
	d.Reset()
	d.Write(b)
	return d.Sum64()
}

// An xxDigest computes xxHash64 over data written in pieces, so that a
// symfile is hashed as it is read, a chunk at a time. Reset it before
// use.
type xxDigest struct {
	v     [4]uint64 // the four lanes
	total uint64    // bytes written
	buf   [32]byte  // the start of an unfinished stripe
	n     int       // bytes in buf
}

// Reset starts a new hash.
func (d *xxDigest) Reset() {
	p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap
	d.v = [4]uint64{p1 + p2, p2, 0, -p1}
	d.total, d.n = 0, 0
}

// Write adds b to the hashed data.
func (d *xxDigest) Write(b []byte) {
	d.total += uint64(len(b))
	if d.n > 0 {
		k := copy(d.buf[d.n:], b)
		d.n += k
		b = b[k:]
		if d.n < len(d.buf) {
			return
		}
		d.stripe(d.buf[:])
		d.n = 0
	}
	for ; len(b) >= 32; b = b[32:] {
		d.stripe(b)
	}
	d.n = copy(d.buf[:], b)
}

// stripe mixes 32 bytes into the lanes.
func (d *xxDigest) stripe(b []byte) {
	d.v[0] = xxRound(d.v[0], binary.LittleEndian.Uint64(b[0:]))
	d.v[1] = xxRound(d.v[1], binary.LittleEndian.Uint64(b[8:]))
	d.v[2] = xxRound(d.v[2], binary.LittleEndian.Uint64(b[16:]))
	d.v[3] = xxRound(d.v[3], binary.LittleEndian.Uint64(b[24:]))
}

// Sum64 returns the hash of the data written since Reset.
func (d *xxDigest) Sum64() uint64 {
	var h uint64
	if d.total >= 32 {
		v := d.v
		h = bits.RotateLeft64(v[0], 1) + bits.RotateLeft64(v[1], 7) +
			bits.RotateLeft64(v[2], 12) + bits.RotateLeft64(v[3], 18)
		for _, x := range v {
			h = xxMerge(h, x)
		}
	} else {
		h = xxPrime5
	}
	h += d.total
	b := d.buf[:d.n]
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

func xxRound(acc, in uint64) uint64 {
	acc += in * xxPrime2
	return bits.RotateLeft64(acc, 31) * xxPrime1
}

func xxMerge(h, v uint64) uint64 {
	h ^= xxRound(0, v)
	return h*xxPrime1 + xxPrime4
}
