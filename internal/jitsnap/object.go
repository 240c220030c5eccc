package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// identFallback is the ident of an object without a named STT_FILE
// symbol, as the dump listener names it.
const identFallback = "jit"

// checkObject is checkImage for an image in memory.
func checkObject(data []byte, order binary.ByteOrder) ([]elfrel.Section, string, error) {
	return checkImage(bytes.NewReader(data), int64(len(data)), order)
}

// checkImage checks with elfrel, the reader the mapping stage opens the
// written NAME.elf with, that the size-byte image r is a relocatable ELF
// object (ELFCLASS64, of a machine elfrel.Relocatable accepts) in byte
// order order whose section headers and contents lie within the image,
// and returns its sections
// without the null section 0, and its ident: the first named STT_FILE
// symbol's base name, as the dump listener computes it, or "jit" (also
// when the symbol table's names take more than maxIdentNames bytes). The
// error is an *elfrel.FormatError or *elfrel.UnsupportedError naming the
// object "symfile".
func checkImage(r io.ReaderAt, size int64, order binary.ByteOrder) ([]elfrel.Section, string, error) {
	const name = "symfile"
	// The process is 64-bit: a 32-bit object, which elfrel would read, is
	// not one its JIT registered.
	var head [elf.EI_NIDENT]byte
	if n, _ := r.ReadAt(head[:], 0); n == len(head) && bytes.Equal(head[:4], []byte(elf.ELFMAG)) && elf.Class(head[elf.EI_CLASS]) == elf.ELFCLASS32 {
		return nil, "", &elfrel.UnsupportedError{File: name, Msg: "ELFCLASS32 object"}
	}
	f, err := elfrel.NewFile(r, size, name)
	if err != nil {
		return nil, "", err
	}
	if err := f.RequireRel(); err != nil {
		return nil, "", err
	}
	if f.ByteOrder != order {
		return nil, "", &elfrel.FormatError{File: name, Off: elf.EI_DATA,
			Msg: fmt.Sprintf("byte order %v does not match the process's %v", f.ByteOrder, order)}
	}
	if len(f.Sections) == 0 {
		return nil, "", &elfrel.FormatError{File: name, Off: 40, Msg: "no section headers"}
	}
	// The ident, as the dump listener computes it: the first named
	// STT_FILE symbol. A malformed symbol table just means no ident.
	ident := identFallback
	if n := symbolNamesSize(f); n > maxIdentNames {
		return f.Sections[1:], ident, nil
	}
	errFound := errors.New("found")
	f.EachSymbol(true, func(_ int, s *elfrel.Symbol) error {
		if s.Type() == elf.STT_FILE && s.Name != "" {
			ident = sanitizeIdent(llvmFilename(s.Name))
			return errFound
		}
		return nil
	})
	return f.Sections[1:], ident, nil
}

// maxIdentNames bounds the string table read for the ident: a JIT
// object's names take kilobytes to a few MiB.
const maxIdentNames = 64 << 20

// symbolNamesSize returns the size of the string table of f's symbol
// table, or 0.
func symbolNamesSize(f *elfrel.File) uint64 {
	for _, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			return f.Sections[s.Link].Size // Link validated by elfrel
		}
	}
	return 0
}

// llvmFilename returns the last component of a path the way
// llvm::sys::path::filename does on POSIX: "a/b.c" gives "b.c", and a
// path ending in a separator gives ".".
func llvmFilename(p string) string {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return "."
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 && len(p) > 1 {
		return p[i+1:]
	}
	return p
}

// sanitizeIdent reduces an ident to a file-name stem as the listener
// does: at most 96 bytes of [A-Za-z0-9._-], anything else becoming '_',
// and "jit" in front of an empty or dot-leading result.
func sanitizeIdent(s string) string {
	if len(s) > 96 {
		s = s[:96]
	}
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return identFallback + string(b)
	}
	return string(b)
}
