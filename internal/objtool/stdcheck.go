package objtool

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// The standard library's readers (debug/macho, debug/pe, debug/elf)
// copy tables and names out of a file before they return, sized by what
// its headers say. Each table is checked against the file, but not
// against the others: a fat Mach-O file whose members all point at one
// range, sections whose relocations all point at one table, symbols or
// sections whose names all point at one long string make them copy the
// same bytes thousands of times (a 3 MB PE file of 60,000 sections with
// one relocation table ran pprof out of memory at 4.5 GB). So before a
// file goes to them, the tables they would copy are charged here:
// together at most the file's size, as distinct tables of a real file
// are, and the names, each copied once per reference, at most
// maxNameCopies. This follows what each reader copies in Go 1.26; a
// reader that copies less only makes the check stricter than needed.

// stdBounds charges the tables and names a standard library reader
// would copy out of a file (or a fat file's member) of size bytes.
type stdBounds struct {
	size   uint64
	tables uint64 // bytes of tables charged
	names  uint64 // bytes of names charged
}

// maxNameCopies is the most the names a reader copies may add up to, for
// a file of size bytes: four times the file, and 1 MiB. Names of a real
// file take at most its string tables, a bit more where a linker shares
// one name's tail with another's.
func maxNameCopies(size uint64) uint64 { return 4*size + 1<<20 }

// table charges the table what of n bytes at off, if it lies within the
// file (else the reader fails on it, copying nothing).
func (b *stdBounds) table(what string, off, n uint64) error {
	if n == 0 || off > b.size || n > b.size-off {
		return nil
	}
	if n > b.size-b.tables {
		return fmt.Errorf("%s (%d bytes at %#x) and the other tables add up to more than the %d-byte file: they overlap", what, n, off, b.size)
	}
	b.tables += n
	return nil
}

// name charges n bytes of names.
func (b *stdBounds) name(what string, n uint64) error {
	b.names += n
	if limit := maxNameCopies(b.size); b.names > limit {
		return fmt.Errorf("%s, one copy per reference, add up to more than %d bytes for a %d-byte file: they overlap", what, limit, b.size)
	}
	return nil
}

// cstringLen returns the length of the NUL-terminated string at off in
// tab, or to its end without a NUL, as the readers copy it.
func cstringLen(tab []byte, off uint64) uint64 {
	if off >= uint64(len(tab)) {
		return 0
	}
	if i := bytes.IndexByte(tab[off:], 0); i >= 0 {
		return uint64(i)
	}
	return uint64(len(tab)) - off
}

// readTable reads n bytes at off of r; nil if they are not all there.
func readTable(r io.ReaderAt, off, n, size uint64) []byte {
	if off > size || n > size-off {
		return nil
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, int64(off)); err != nil {
		return nil
	}
	return b
}

// checkMachO checks the thin Mach-O file of size bytes in r before
// debug/macho reads it: its load commands' symbol tables, string tables,
// indirect symbol tables and sections' relocations, and the symbols'
// names. A file debug/macho would refuse anyway passes.
func checkMachO(r io.ReaderAt, size uint64) error {
	var hdr [28]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil
	}
	var bo binary.ByteOrder
	var magic uint32
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		if m := o.Uint32(hdr[:]); m == macho.Magic32 || m == macho.Magic64 {
			bo, magic = o, m
		}
	}
	if bo == nil {
		return nil
	}
	// Sizes of the header, nlist, segment and section structures, and
	// where a section's reloff is (nreloc follows).
	hdrSize, symSize, segCmd, segSize, sectSize, relAt := uint64(28), uint64(12), uint32(macho.LoadCmdSegment), uint64(56), uint64(68), uint64(48)
	if magic == macho.Magic64 {
		hdrSize, symSize, segCmd, segSize, sectSize, relAt = 32, 16, uint32(macho.LoadCmdSegment64), 72, 80, 56
	}
	ncmd := bo.Uint32(hdr[16:])
	cmds := readTable(r, hdrSize, uint64(bo.Uint32(hdr[20:])), size)
	b := stdBounds{size: size}
	for range ncmd {
		if len(cmds) < 8 {
			break
		}
		cmd, siz := bo.Uint32(cmds), bo.Uint32(cmds[4:])
		if siz < 8 || uint64(siz) > uint64(len(cmds)) {
			break
		}
		c := cmds[:siz]
		cmds = cmds[siz:]
		switch {
		case cmd == uint32(macho.LoadCmdSymtab) && len(c) >= 24:
			symoff, nsyms := uint64(bo.Uint32(c[8:])), uint64(bo.Uint32(c[12:]))
			stroff, strsize := uint64(bo.Uint32(c[16:])), uint64(bo.Uint32(c[20:]))
			if err := b.table("the string table", stroff, strsize); err != nil {
				return err
			}
			if err := b.table("the symbol table", symoff, nsyms*symSize); err != nil {
				return err
			}
			if err := b.symbolNames(r, symoff, nsyms, symSize, readTable(r, stroff, strsize, size), bo); err != nil {
				return err
			}
		case cmd == uint32(macho.LoadCmdDysymtab) && len(c) >= 64:
			if err := b.table("the indirect symbol table", uint64(bo.Uint32(c[56:])), 4*uint64(bo.Uint32(c[60:]))); err != nil {
				return err
			}
		case cmd == segCmd && uint64(len(c)) >= segSize:
			nsects := uint64(bo.Uint32(c[segSize-8:]))
			for k := range nsects {
				at := segSize + k*sectSize
				if at+sectSize > uint64(len(c)) {
					break
				}
				s := c[at:]
				reloff, nreloc := bo.Uint32(s[relAt:]), bo.Uint32(s[relAt+4:])
				if err := b.table(fmt.Sprintf("the relocations of section %d", k), uint64(reloff), 8*uint64(nreloc)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// symbolNames charges the names of the nsyms Mach-O symbols of symSize
// bytes at symoff, in the string table strtab.
func (b *stdBounds) symbolNames(r io.ReaderAt, symoff, nsyms, symSize uint64, strtab []byte, bo binary.ByteOrder) error {
	if strtab == nil || symoff > b.size || nsyms*symSize > b.size-symoff {
		return nil
	}
	buf := make([]byte, 4096*symSize)
	for i := uint64(0); i < nsyms; {
		n := min(nsyms-i, 4096)
		chunk := buf[:n*symSize]
		if _, err := r.ReadAt(chunk, int64(symoff+i*symSize)); err != nil {
			return nil
		}
		for k := range n {
			if err := b.name("its symbols' names", cstringLen(strtab, uint64(bo.Uint32(chunk[k*symSize:])))); err != nil {
				return err
			}
		}
		i += n
	}
	return nil
}

// checkPE checks the PE file of size bytes in r before debug/pe reads
// it: its COFF symbol and string tables, its sections' relocations, and
// the long names of symbols and sections.
func checkPE(r io.ReaderAt, size uint64) error {
	le := binary.LittleEndian
	var dos [96]byte
	if _, err := r.ReadAt(dos[:], 0); err != nil {
		return nil
	}
	base := uint64(0)
	if dos[0] == 'M' && dos[1] == 'Z' {
		base = uint64(le.Uint32(dos[0x3c:])) + 4
	}
	var fh [20]byte
	if _, err := r.ReadAt(fh[:], int64(base)); err != nil {
		return nil
	}
	nsects, symPtr, nsyms, optSize := uint64(le.Uint16(fh[2:])), le.Uint32(fh[8:]), le.Uint32(fh[12:]), uint64(le.Uint16(fh[16:]))
	b := stdBounds{size: size}
	var strtab []byte
	if symPtr > 0 {
		// As debug/pe computes it, in 32 bits.
		off := uint64(symPtr + 18*nsyms)
		var l [4]byte
		if _, err := r.ReadAt(l[:], int64(off)); err == nil && le.Uint32(l[:]) > 4 {
			n := uint64(le.Uint32(l[:]) - 4)
			if err := b.table("the string table", off+4, n); err != nil {
				return err
			}
			strtab = readTable(r, off+4, n, size)
		}
		if err := b.table("the symbol table", uint64(symPtr), 18*uint64(nsyms)); err != nil {
			return err
		}
		if err := b.coffNames(r, uint64(symPtr), uint64(nsyms), strtab); err != nil {
			return err
		}
	}
	sects := readTable(r, base+20+optSize, 40*nsects, size)
	for k := uint64(0); k+40 <= uint64(len(sects)); k += 40 {
		s := sects[k:]
		if s[0] == '/' {
			num, _, _ := bytes.Cut(s[1:8], []byte{0})
			if i, err := strconv.Atoi(string(num)); err == nil && i >= 4 {
				if err := b.name("its sections' names", cstringLen(strtab, uint64(i)-4)); err != nil {
					return err
				}
			}
		}
		if err := b.table(fmt.Sprintf("the relocations of section %d", k/40+1), uint64(le.Uint32(s[24:])), 10*uint64(le.Uint16(s[32:]))); err != nil {
			return err
		}
	}
	return nil
}

// coffNames charges the long names of the nsyms COFF symbols at symPtr
// (auxiliary records have none), in the string table strtab.
func (b *stdBounds) coffNames(r io.ReaderAt, symPtr, nsyms uint64, strtab []byte) error {
	if strtab == nil || symPtr > b.size || 18*nsyms > b.size-symPtr {
		return nil
	}
	le := binary.LittleEndian
	buf := make([]byte, 18*4096)
	aux := 0
	for i := uint64(0); i < nsyms; {
		n := min(nsyms-i, 4096)
		chunk := buf[:18*n]
		if _, err := r.ReadAt(chunk, int64(symPtr+18*i)); err != nil {
			return nil
		}
		for k := uint64(0); k < n; k++ {
			s := chunk[18*k:]
			if aux > 0 {
				aux--
				continue
			}
			aux = int(s[17])
			if le.Uint32(s) == 0 && le.Uint32(s[4:]) >= 4 {
				if err := b.name("its symbols' names", cstringLen(strtab, uint64(le.Uint32(s[4:]))-4)); err != nil {
					return err
				}
			}
		}
		i += n
	}
	return nil
}
