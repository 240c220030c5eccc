package elfrel

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// maxNoteBytes bounds how much of a note section or segment BuildID reads:
// a build ID note takes 36 bytes, and the notes before it a few hundred.
const maxNoteBytes = 1 << 20

// ntGNUBuildID is the type of the GNU build ID note.
const ntGNUBuildID = 3

// BuildID returns the GNU build ID (the descriptor of the NT_GNU_BUILD_ID
// note) of f, or nil if it has none. Like pprof, it looks in the PT_NOTE
// segments first, then in the SHT_NOTE sections, and reports an error
// when one of them holds two build IDs.
func (f *File) BuildID() ([]byte, error) {
	type area struct {
		name      string
		off, size uint64
		align     uint64
	}
	var areas []area
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE {
			areas = append(areas, area{name: "PT_NOTE segment", off: p.Off, size: p.Filesz, align: p.Align})
		}
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			areas = append(areas, area{name: s.Name, off: s.Offset, size: s.Size, align: s.Addralign})
		}
	}
	for _, a := range areas {
		if a.off > uint64(f.size) || a.size > uint64(f.size)-a.off {
			return nil, f.formatErr(a.name, -1, "notes [%#x, +%#x) extend past the end of the file (%d bytes)", a.off, a.size, f.size)
		}
		data := make([]byte, min(a.size, maxNoteBytes))
		if _, err := f.r.ReadAt(data, int64(a.off)); err != nil && err != io.EOF {
			return nil, &FormatError{File: f.Name, Section: a.name, Msg: "cannot read notes", Err: err}
		}
		id, err := NoteBuildID(data, f.ByteOrder, a.align)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", f.Name, a.name, err)
		}
		if id != nil {
			return id, nil
		}
	}
	return nil, nil
}

// StdBuildID returns the GNU build ID of f, a file the standard
// library read (of any class and type), or nil, looking where
// [File.BuildID] looks: the PT_NOTE segments, then the SHT_NOTE sections.
func StdBuildID(f *elf.File) ([]byte, error) {
	read := func(r io.ReaderAt, size, align uint64) ([]byte, error) {
		data := make([]byte, min(size, 1<<16))
		if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
			return nil, err
		}
		return NoteBuildID(data, f.ByteOrder, align)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE {
			if id, err := read(p, p.Filesz, p.Align); id != nil || err != nil {
				return id, err
			}
		}
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			if id, err := read(s, s.Size, s.Addralign); id != nil || err != nil {
				return id, err
			}
		}
	}
	return nil, nil
}

// StdSupLink is [File.SupLink] for a file the standard library read.
func StdSupLink(f *elf.File) (link SupLink, ok bool) {
	return supLink(func(name string) []byte {
		s := f.Section(name)
		if s == nil || s.Size > maxLinkBytes || s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil
		}
		data, err := s.Data()
		if err != nil {
			return nil
		}
		return data
	}, f.ByteOrder)
}

// ErrMultipleBuildIDs is the error of notes that hold more than one GNU
// build ID.
var ErrMultipleBuildIDs = errors.New("multiple build ids found, don't know which to use")

// NoteBuildID returns the GNU build ID among the ELF notes in data, in
// byte order bo, whose entries are aligned to align bytes (4 or 8;
// anything else counts as 4), or nil if there is none; ErrMultipleBuildIDs
// if there are several. A truncated note ends the list, as pprof's parser
// has it.
func NoteBuildID(data []byte, bo binary.ByteOrder, align uint64) ([]byte, error) {
	if align != 8 {
		align = 4
	}
	pad := func(n uint64) uint64 { return (n + align - 1) &^ (align - 1) }
	var id []byte
	for len(data) >= 12 {
		namesz := uint64(bo.Uint32(data))
		descsz := uint64(bo.Uint32(data[4:]))
		typ := bo.Uint32(data[8:])
		rest := data[12:]
		if pad(namesz) > uint64(len(rest)) || pad(descsz) > uint64(len(rest))-pad(namesz) {
			break
		}
		name := rest[:namesz]
		desc := rest[pad(namesz) : pad(namesz)+descsz]
		if typ == ntGNUBuildID && string(name) == "GNU\x00" {
			if id != nil {
				return nil, ErrMultipleBuildIDs
			}
			id = append([]byte(nil), desc...)
		}
		data = rest[pad(namesz)+pad(descsz):]
	}
	return id, nil
}

// DebugLink returns the file name and CRC-32 that f's .gnu_debuglink
// section records for its separate debug file, and ok false if it has
// none or it is malformed.
func (f *File) DebugLink() (name string, crc uint32, ok bool) {
	data := f.smallSection(".gnu_debuglink")
	if data == nil {
		return "", 0, false
	}
	return ParseDebugLink(data, f.ByteOrder)
}

// ParseDebugLink reads the contents of a .gnu_debuglink section, in byte
// order bo: the debug file's name, zero padding to 4 bytes, and its
// CRC-32. ok is false if data is not such a section.
func ParseDebugLink(data []byte, bo binary.ByteOrder) (name string, crc uint32, ok bool) {
	for n, c := range data {
		if c == 0 {
			off := (n + 4) &^ 3
			if n == 0 || off+4 > len(data) {
				return "", 0, false
			}
			return string(data[:n]), bo.Uint32(data[off:]), true
		}
	}
	return "", 0, false
}

// FileCRC returns the CRC-32 (IEEE) of everything r holds, as
// .gnu_debuglink records it for a debug file.
func FileCRC(r io.Reader) (uint32, error) {
	h := crc32.NewIEEE()
	_, err := io.Copy(h, r)
	return h.Sum32(), err
}

// maxLinkBytes bounds how much of a .gnu_debuglink, .gnu_debugaltlink or
// .debug_sup section is read: a path and a hash.
const maxLinkBytes = 4096

// A SupLink is what a binary's debug file records of its supplementary
// file, the file into which dwz moved DWARF that several binaries share
// (GNU's alternate debug file): the file's name, absolute or relative
// to the directory of the file holding the link, and its ID, which the
// supplementary file must have (see [File.SupID]).
type SupLink struct {
	Name string
	ID   []byte
	// DWARF5 is true for a DWARF 5 .debug_sup section, false for GNU's
	// .gnu_debugaltlink.
	DWARF5 bool
}

// SupLink returns what f records of its supplementary file, from its
// .gnu_debugaltlink section or, failing that, its .debug_sup section;
// ok is false if it has neither, the section is malformed, or, for
// .debug_sup, f is itself a supplementary file.
func (f *File) SupLink() (link SupLink, ok bool) {
	return supLink(f.smallSection, f.ByteOrder)
}

// supLink is SupLink for a file whose sections small returns: nil for a
// missing, compressed or too large one.
func supLink(small func(name string) []byte, bo binary.ByteOrder) (link SupLink, ok bool) {
	if data := small(".gnu_debugaltlink"); data != nil {
		return ParseAltLink(data)
	}
	if data := small(".debug_sup"); data != nil {
		sup, link, ok := ParseDebugSup(data, bo)
		return link, ok && !sup
	}
	return SupLink{}, false
}

// SupID returns the ID by which a binary's [SupLink] names f, if f is a
// supplementary file: the checksum of its .debug_sup section (DWARF 5)
// if it has one, else its GNU build ID; nil if it has neither.
func (f *File) SupID() ([]byte, error) {
	if data := f.smallSection(".debug_sup"); data != nil {
		if sup, link, ok := ParseDebugSup(data, f.ByteOrder); ok && sup {
			return link.ID, nil
		}
	}
	return f.BuildID()
}

// smallSection returns the contents of f's section called name, or nil
// if it has none, or it is compressed or larger than maxLinkBytes.
func (f *File) smallSection(name string) []byte {
	i := f.Section(name)
	if i < 0 || f.Sections[i].Size > maxLinkBytes || f.Sections[i].Flags&elf.SHF_COMPRESSED != 0 {
		return nil
	}
	data, err := f.SectionData(i)
	if err != nil {
		return nil
	}
	return data
}

// ParseAltLink reads the contents of a .gnu_debugaltlink section: the
// supplementary file's name, a NUL, and its build ID. ok is false if
// data is not such a section.
func ParseAltLink(data []byte) (link SupLink, ok bool) {
	for n, c := range data {
		if c == 0 {
			if n == 0 || n+1 == len(data) {
				return SupLink{}, false
			}
			return SupLink{Name: string(data[:n]), ID: append([]byte(nil), data[n+1:]...)}, true
		}
	}
	return SupLink{}, false
}

// ParseDebugSup reads the contents of a DWARF 5 .debug_sup section, in
// byte order bo: version 5, whether the file holding it is the
// supplementary file (sup), the supplementary file's name (empty in that
// file itself) and its checksum. ok is false if data is not such a
// section.
func ParseDebugSup(data []byte, bo binary.ByteOrder) (sup bool, link SupLink, ok bool) {
	if len(data) < 4 || bo.Uint16(data) != 5 || data[2] > 1 {
		return false, SupLink{}, false
	}
	sup, rest := data[2] == 1, data[3:]
	n := 0
	for n < len(rest) && rest[n] != 0 {
		n++
	}
	if n == len(rest) {
		return false, SupLink{}, false
	}
	name, rest := string(rest[:n]), rest[n+1:]
	size, k := binary.Uvarint(rest)
	if k <= 0 || size == 0 || size > uint64(len(rest)-k) {
		return false, SupLink{}, false
	}
	if !sup && name == "" {
		return false, SupLink{}, false
	}
	return sup, SupLink{Name: name, ID: append([]byte(nil), rest[k:k+int(size)]...), DWARF5: true}, true
}
