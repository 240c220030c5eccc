package jitsym

import (
	"encoding/binary"
	"fmt"
)

// cursor reads DWARF-encoded values from one section. It records the first
// error and then returns zeros, so that a decoding loop can check err once
// per record; callers must not act on values read after an error.
type cursor struct {
	data []byte
	off  int
	bo   binary.ByteOrder
	sec  string // section name, for errors
	err  error
}

func (c *cursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = &decodeError{sec: c.sec, off: int64(c.off), msg: fmt.Sprintf(format, args...)}
	}
}

// need reports whether n more bytes are available, failing otherwise.
func (c *cursor) need(n int) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || n > len(c.data)-c.off {
		c.fail("unexpected end of data (need %d bytes, have %d)", n, len(c.data)-c.off)
		return false
	}
	return true
}

func (c *cursor) u8() uint8 {
	if !c.need(1) {
		return 0
	}
	c.off++
	return c.data[c.off-1]
}

func (c *cursor) u16() uint16 {
	if !c.need(2) {
		return 0
	}
	c.off += 2
	return c.bo.Uint16(c.data[c.off-2:])
}

func (c *cursor) u24() uint32 {
	if !c.need(3) {
		return 0
	}
	b := c.data[c.off : c.off+3]
	c.off += 3
	if c.bo == binary.BigEndian {
		return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	}
	return uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
}

func (c *cursor) u32() uint32 {
	if !c.need(4) {
		return 0
	}
	c.off += 4
	return c.bo.Uint32(c.data[c.off-4:])
}

func (c *cursor) u64() uint64 {
	if !c.need(8) {
		return 0
	}
	c.off += 8
	return c.bo.Uint64(c.data[c.off-8:])
}

// uintN reads an n-byte unsigned value, n in {1, 2, 4, 8}.
func (c *cursor) uintN(n int) uint64 {
	switch n {
	case 1:
		return uint64(c.u8())
	case 2:
		return uint64(c.u16())
	case 4:
		return uint64(c.u32())
	case 8:
		return c.u64()
	}
	c.fail("unsupported %d-byte value", n)
	return 0
}

func (c *cursor) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (c *cursor) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// cstr reads a NUL-terminated string.
func (c *cursor) cstr() string {
	if c.err != nil {
		return ""
	}
	for i := c.off; i < len(c.data); i++ {
		if c.data[i] == 0 {
			s := string(c.data[c.off:i])
			c.off = i + 1
			return s
		}
	}
	c.fail("unterminated string")
	return ""
}

func (c *cursor) skip(n int) {
	if c.need(n) {
		c.off += n
	}
}

// unitLength reads an initial length field and returns the length and
// whether the unit uses the 64-bit DWARF format.
func (c *cursor) unitLength() (n uint64, dwarf64 bool) {
	n = uint64(c.u32())
	if n == 0xffffffff {
		return c.u64(), true
	}
	if n >= 0xfffffff0 {
		c.fail("reserved initial length %#x", n)
		return 0, false
	}
	return n, false
}

// offsetSized reads a section offset of the unit's format.
func (c *cursor) offsetSized(dwarf64 bool) uint64 {
	if dwarf64 {
		return c.u64()
	}
	return uint64(c.u32())
}

// strAt returns the NUL-terminated string at off in a string section.
func strAt(sec []byte, off uint64) (string, bool) {
	if off >= uint64(len(sec)) {
		return "", false
	}
	for i := off; i < uint64(len(sec)); i++ {
		if sec[i] == 0 {
			return string(sec[off:i]), true
		}
	}
	return "", false
}

// A decodeError is a problem found while decoding a DWARF section; the
// builder turns it into an *elfrel.FormatError naming the file.
type decodeError struct {
	sec string
	off int64
	msg string
}

func (e *decodeError) Error() string {
	if e.off < 0 {
		return fmt.Sprintf("section %s: %s", e.sec, e.msg)
	}
	return fmt.Sprintf("section %s: %s at offset %#x", e.sec, e.msg, e.off)
}
