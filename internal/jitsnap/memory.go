package jitsnap

import (
	"encoding/binary"
	"fmt"
)

// Memory is the address space of a target process, read-only. The
// snapshot reads the descriptor, the list and the symfiles through it;
// tests substitute a synthetic image.
type Memory interface {
	// ReadMemory fills p with the bytes at [addr, addr+len(p)) of the
	// target. It returns an error (a *ReadError for an unreadable
	// address) unless every byte was read.
	ReadMemory(addr uint64, p []byte) error
}

// maxReadChunk bounds one read system call, so a large symfile is read
// in steps and a fault names an address near the bad page.
const maxReadChunk = 16 << 20

// readU64s reads n consecutive 64-bit words at addr.
func readU64s(mem Memory, order binary.ByteOrder, addr uint64, n int) ([]uint64, error) {
	if addr > ^uint64(0)-uint64(8*n) {
		return nil, &ReadError{Addr: addr, Len: uint64(8 * n), Err: fmt.Errorf("range wraps around the address space")}
	}
	buf := make([]byte, 8*n)
	if err := mem.ReadMemory(addr, buf); err != nil {
		return nil, err
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = order.Uint64(buf[8*i:])
	}
	return out, nil
}
