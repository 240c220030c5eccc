package objtool

import (
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/safename"
)

// openMachO reads the thin Mach-O file fd of size bytes at path.
func openMachO(path string, fd *os.File, size uint64) (*foreignBin, error) {
	f, err := newMachO(fd, size)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	b, err := fromMachO(path, f, fd)
	return withDSYM(b, err, size)
}

// withDSYM checks the DWARF of b, read from a file (or fat file's
// member) of size bytes, or, if b has none, takes its dSYM's.
func withDSYM(b *foreignBin, err error, size uint64) (*foreignBin, error) {
	if err == nil {
		err = checkOverlap(b.path, b.dwarf, size)
	}
	if err != nil {
		return nil, err
	}
	if b.dwarf[".debug_info"].size == 0 {
		b.addDSYM()
	}
	return b, nil
}

// newMachO checks the thin Mach-O file of size bytes in r (see
// checkMachO) and reads it with debug/macho.
func newMachO(r io.ReaderAt, size uint64) (*macho.File, error) {
	if err := checkMachO(r, size); err != nil {
		return nil, err
	}
	return macho.NewFile(r)
}

// A fatMember is one member of a fat Mach-O file.
type fatMember struct {
	cpu       macho.Cpu
	off, size uint64
}

// fatMembers reads the header of the fat Mach-O file of size bytes in
// r, big-endian: its magic, its number of members, and a fat_arch per
// member (CPU type and subtype, offset, size, alignment). Each member
// must lie within the file, and no two may overlap: debug/macho's
// OpenFat parses every member, and a 456 KB file of 20,000 members that
// all point at one range had it parse that range 20,000 times (3 GB,
// 64 s). Here only the members asked for are parsed, once.
func fatMembers(r io.ReaderAt, size uint64) ([]fatMember, error) {
	var hdr [8]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, errors.New("invalid fat_header")
	}
	n := uint64(binary.BigEndian.Uint32(hdr[4:]))
	if n == 0 {
		return nil, errors.New("file contains no images")
	}
	if n > (size-8)/20 {
		return nil, fmt.Errorf("%d members do not fit in the %d-byte file", n, size)
	}
	archs := make([]byte, 20*n)
	if _, err := r.ReadAt(archs, 8); err != nil {
		return nil, errors.New("invalid fat_arch header")
	}
	ms := make([]fatMember, n)
	for i := range ms {
		a := archs[20*i:]
		m := fatMember{cpu: macho.Cpu(binary.BigEndian.Uint32(a)), off: uint64(binary.BigEndian.Uint32(a[8:])), size: uint64(binary.BigEndian.Uint32(a[12:]))}
		if m.off > size || m.size > size-m.off {
			return nil, fmt.Errorf("member %d (%d bytes at %#x) is not within the %d-byte file", i, m.size, m.off, size)
		}
		ms[i] = m
	}
	byOff := slices.Clone(ms)
	slices.SortFunc(byOff, func(a, b fatMember) int { return cmpU64(a.off, b.off) })
	for i := 1; i < len(byOff); i++ {
		if p := byOff[i-1]; p.off+p.size > byOff[i].off {
			return nil, fmt.Errorf("members at %#x and %#x overlap", p.off, byOff[i].off)
		}
	}
	return ms, nil
}

// openFatMachO reads the member of the fat Mach-O file fd of size bytes
// at path that upstream pprof would read (binutils' openFatMachO): the
// first for the host's CPU.
func openFatMachO(path string, fd *os.File, size uint64) (*foreignBin, error) {
	ms, err := fatMembers(fd, size)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	cpu, ok := machoCPU()
	if !ok {
		return nil, fmt.Errorf("unsupported host architecture for %s: %s", path, runtime.GOARCH)
	}
	// Upstream asks for macho.CpuArm on arm64 hosts, which no arm64
	// member matches; the 64-bit variant of the host's CPU is taken too.
	for _, m := range ms {
		if m.cpu == cpu || m.cpu == cpu|0x01000000 {
			f, err := newMachO(io.NewSectionReader(fd, int64(m.off), int64(m.size)), m.size)
			if err != nil {
				return nil, fmt.Errorf("error parsing %s: %w", path, err)
			}
			b, err := fromMachO(path, f, fd)
			return withDSYM(b, err, m.size)
		}
	}
	return nil, fmt.Errorf("architecture not found in %s: %s", path, runtime.GOARCH)
}

// machoDWARFName returns the ELF name of the Mach-O section sect of
// segment seg if it is a DWARF section ("__debug_info" in "__DWARF" is
// ".debug_info"), or "". Section names are cut at 16 bytes.
func machoDWARFName(seg, sect string) string {
	if seg != "__DWARF" || !strings.HasPrefix(sect, "__debug_") {
		return ""
	}
	if sect == "__debug_str_offs" {
		return ".debug_str_offsets"
	}
	return "." + sect[2:]
}

func fromMachO(path string, f *macho.File, closer io.Closer) (*foreignBin, error) {
	b := &foreignBin{path: path, format: "Mach-O", closer: closer, bo: f.ByteOrder, dwarf: map[string]rawSection{}}
	switch f.Cpu {
	case macho.CpuAmd64:
		b.machine = elf.EM_X86_64
	case macho.Cpu386:
		b.machine = elf.EM_386
	case macho.CpuArm64:
		b.machine = elf.EM_AARCH64
	}
	if seg := f.Segment("__TEXT"); seg != nil {
		b.textAddr, b.hasText = seg.Addr, true
	}
	for _, l := range f.Loads {
		// LC_UUID (0x1b): 8 bytes of command header, 16 of UUID.
		if raw := l.Raw(); len(raw) == 24 && f.ByteOrder.Uint32(raw) == 0x1b {
			b.buildID = fmt.Sprintf("%x", raw[8:24])
		}
	}
	for _, s := range f.Sections {
		rs := stdSection(s.Seg+","+s.Name, s.Addr, s.Size, s)
		if name := machoDWARFName(s.Seg, s.Name); name != "" {
			if _, dup := b.dwarf[name]; !dup {
				b.dwarf[name] = rs
			}
			continue
		}
		// S_ZEROFILL (1) and the like hold no bytes in the file.
		const attrPureInstructions, attrSomeInstructions = 0x80000000, 0x400
		if s.Flags&(attrPureInstructions|attrSomeInstructions) != 0 && s.Flags&0xff != 1 {
			b.code = append(b.code, rs)
		}
	}
	if f.Symtab != nil {
		for _, s := range f.Symtab.Syms {
			// Defined in a section (N_SECT) and not a debugging entry
			// (N_STAB).
			const nStab, nType, nSect = 0xe0, 0x0e, 0x0e
			if s.Type&nStab != 0 || s.Type&nType != nSect || s.Sect == 0 || int(s.Sect) > len(f.Sections) {
				continue
			}
			// llvm-symbolizer drops the leading underscore of C names.
			b.syms = append(b.syms, jitsym.Sym{Name: strings.TrimPrefix(s.Name, "_"), Addr: s.Value})
		}
		var bounds []uint64
		for _, s := range b.syms {
			bounds = append(bounds, s.Addr)
		}
		for _, s := range f.Sections {
			bounds = append(bounds, s.Addr+s.Size)
		}
		sizeSymbols(b.syms, bounds)
	}
	b.sortCode()
	return b, nil
}

// addDSYM takes b's DWARF from its dSYM bundle, where llvm-symbolizer
// looks for it: PATH.dSYM/Contents/Resources/DWARF/BASENAME, if that is
// a Mach-O file with the same UUID (or either has none). Linkers leave
// the DWARF of a Mach-O executable in its object files; dsymutil
// collects it there. The dSYM of a fat executable is fat too: its member
// with b's UUID (without one, for b's CPU) is taken, as llvm-symbolizer
// takes it. A dSYM file that is there but cannot be read (not a regular
// file, or refused by the checks of openForeign) is noted in b.notes.
func (b *foreignBin) addDSYM() {
	dsym := filepath.Join(b.path+".dSYM", "Contents", "Resources", "DWARF", filepath.Base(b.path))
	d, err := b.openDSYM(dsym)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.notes = append(b.notes, fmt.Sprintf("%s: its dSYM file is not read: %v", safename.String(b.path), err))
		}
		return
	}
	if d.buildID != b.buildID && d.buildID != "" && b.buildID != "" || d.dwarf[".debug_info"].size == 0 {
		d.close()
		return
	}
	b.dwarf, b.bo = d.dwarf, d.bo
	b.closer = multiCloser{b.closer, d.closer}
}

// openDSYM reads the dSYM file at path for b: a thin Mach-O file, or the
// member of a fat one with b's UUID, else the first for b's CPU. Only a
// regular file is opened: a FIFO in a bundle would block.
func (b *foreignBin) openDSYM(path string) (*foreignBin, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	fd, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	d, err := readDSYM(b, path, fd, size)
	if err == nil {
		err = checkOverlap(path, d.dwarf, size)
	}
	if err != nil {
		fd.Close()
		return nil, err
	}
	d.closer = fd
	return d, nil
}

// readDSYM reads the dSYM file fd of size bytes at path for b.
func readDSYM(b *foreignBin, path string, fd *os.File, size uint64) (*foreignBin, error) {
	var magic [4]byte
	if _, err := fd.ReadAt(magic[:], 0); err != nil || binary.BigEndian.Uint32(magic[:]) != macho.MagicFat {
		f, err := newMachO(fd, size)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: %w", path, err)
		}
		return fromMachO(path, f, nil)
	}
	ms, err := fatMembers(fd, size)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	var byCPU *foreignBin
	for _, m := range ms {
		f, err := newMachO(io.NewSectionReader(fd, int64(m.off), int64(m.size)), m.size)
		if err != nil {
			continue
		}
		d, err := fromMachO(path, f, nil)
		if err != nil {
			continue
		}
		if b.buildID != "" && d.buildID == b.buildID {
			return d, nil
		}
		if byCPU == nil && d.machine == b.machine && (b.buildID == "" || d.buildID == "") {
			byCPU = d
		}
	}
	if byCPU == nil {
		return nil, fmt.Errorf("%s: no member for %s", path, b.path)
	}
	return byCPU, nil
}
