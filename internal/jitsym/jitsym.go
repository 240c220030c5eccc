// Package jitsym symbolizes absolute addresses in a JIT object dump: a
// relocatable ELF object whose section headers carry the load address of
// each section (see package elfrel).
//
// [Open] reads the object once and builds a sorted index of its compile
// units, functions, inlined call ranges, line tables and symbols; each
// lookup is then a few binary searches, with no per-address scan of
// sections or DWARF entries. The answers reproduce what
//
//	llvm-symbolizer --inlining --no-demangle --obj=OBJECT ADDRESS
//
// prints for the same object (LLVM 14), with the differences listed on
// [Symbolizer.SourceLine]. [NewWithDebug] indexes any 64-bit ELF file
// package elfrel reads, [NewWithLinks] one whose DWARF is partly in
// other files (split DWARF's .dwo files or DWARF package, read as the
// addresses need them; dwz's supplementary file);
// [NewFromSections] indexes the DWARF sections and symbols of another
// container (Mach-O, PE, 32-bit ELF), read by its caller.
//
// With [Links.Lazy], a large linked binary is indexed a unit at a time,
// the first time an address of the unit is looked up (see lazy.go).
//
// The index is compact (line rows are delta-encoded; names are stored
// once, in a few large strings), and Open reads one DWARF section at a
// time, dropping each with the tables built from it: at its peak it
// holds about the object's .debug_info and the index, not every section
// and table at once. For the synthetic object of BenchmarkSynthetic, the index takes
// a fifth of the object's size, and Open's live heap peaks at about
// twice that.
package jitsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/membudget"
)

// A Frame is one source-level frame of an address. The fields mean what
// they mean in github.com/google/pprof/driver.Frame.
type Frame struct {
	Func      string // linkage (mangled) name, or the qualified DWARF name; "" if unknown
	File      string // source file path as llvm-symbolizer prints it; "" if unknown
	Line      int    // line number in File; 0 if unknown
	Column    int    // column number; 0 if unknown
	StartLine int    // DW_AT_decl_line of the function; 0 if unknown
}

// ErrClosed is returned by SourceLine after Close.
var ErrClosed = errors.New("jitsym: symbolizer is closed")

// A Symbolizer answers address queries for one object. After Open (or
// New) returns, it is immutable and its methods may be called from any
// number of goroutines, except Close.
type Symbolizer struct {
	name     string
	hasDWARF bool
	closed   bool

	// The compile units' address ranges are cut into segments where the
	// innermost subroutine changes; with the holes between them, the
	// segments tile [segLo, segHi[len-1]): segment i covers
	// [segHi[i-1], segHi[i]) (segment 0 starts at segLo), so that one
	// binary search over segHi finds an address's, and segCode[i] says
	// what covers it (see segment codes).
	segLo    uint64
	segHi    []uint64
	segCode  []int32
	units    []unit // in .debug_info order
	nodes    []node
	names    []string // function names; names[0] is ""
	tables   []lineTable
	seqHi    []uint64 // seqHi[i] is where seqs[i] ends
	seqs     []sequence
	lines    []byte // the rows of seqs, encoded (see sequence)
	files    []string
	symAddr  []uint64    // symAddr[i] is where syms[i] starts
	syms     []symbol    // sorted by address
	symNames string      // the names of syms
	symFile  []string    // STT_FILE names, by symbol.file
	warnings []string    // what of the DWARF was left out
	split    *splitState // skeleton units' split DWARF files, or nil
	lazy     *lazyIndex  // the units, indexed as needed (see Links.Lazy), or nil
}

// Warnings says what of the object's debug information was left out of
// the index (subroutines nested beyond a bound), each message naming the
// file; the rest is indexed.
func (s *Symbolizer) Warnings() []string { return s.warnings }

// Segment codes: a segment is a hole (no unit), a part of unit u that no
// subroutine covers (unitCode(u)), or innermost subroutine n (n >= 0).
const segHole = -1

func unitCode(u int32) int32 { return -2 - u }
func codeUnit(c int32) int32 { return -2 - c }

// unit is one compile unit's part of the index.
type unit struct {
	table  int32 // Symbolizer.tables index, or -1 without a line table
	nodeLo int32 // its nodes are Symbolizer.nodes[nodeLo:] up to the next unit's
}

// node is a subprogram or an inlined subroutine: one frame of a chain.
type node struct {
	fn        int32 // Symbolizer.names index
	startLine uint32
	parent    int32 // the node this one is inlined into, or -1 for a subprogram
	callFile  int32 // Symbolizer.files index of DW_AT_call_file, or -1
	callLine  uint32
	callCol   uint32
}

// symbol is an ELF symbol that names addresses [addr, end), its addr
// being kept apart in Symbolizer.symAddr.
type symbol struct {
	end  uint64
	name uint32 // offset of its NUL-terminated name in Symbolizer.symNames
	file int32  // Symbolizer.symFile index of the STT_FILE name before a local symbol, or -1
}

// Open opens the named object and builds its index; see New.
func Open(name string) (*Symbolizer, error) {
	fd, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	// Not elfrel.Open: nothing here must hold the File (its 47,000
	// section headers, say) once New no longer needs it.
	f, err := elfrel.NewFile(fd, st.Size(), name)
	if err != nil {
		return nil, err
	}
	if err := f.RequireRel(); err != nil {
		return nil, err
	}
	return New(f)
}

// New builds the index for the object f. It reads f's symbol table and
// DWARF once; the Symbolizer keeps no reference to f, which the caller may
// close afterwards. Without DWARF (see [Symbolizer.HasDWARF]) it answers
// from the symbol table alone. Errors are an *elfrel.FormatError or an
// *elfrel.UnsupportedError, naming the file.
//
// New reads one DWARF section at a time, in phases (the units' entries,
// then their line tables), and lets each go when its phase ends, so that
// its peak memory is about the size of .debug_info and the index it
// builds; it does not use f after the first phase starts. When the DWARF
// it read is large (see collectAbove), it runs a garbage collection
// before it returns: what the build read and decoded is all garbage then,
// and collecting it at once keeps the heap from growing to twice what was
// live during the build before the next collection.
func New(f *elfrel.File) (*Symbolizer, error) {
	return NewWithDebug(f, nil)
}

// collectAbove is the size of .debug_info and .debug_line above which
// New collects the build's garbage before it returns. On
// BenchmarkSynthetic's 56 MiB object (8.6 MiB of .debug_info, 3.8 MiB of
// .debug_line) it takes the median peak RSS of bench/jitsym.sh's (a)
// from 113 to 102 MiB for no measurable time.
const collectAbove = 8 << 20

// NewWithDebug is [New] for a binary f whose DWARF lives in a separate
// debug file, debug (from .gnu_debuglink or the build ID), which has the
// same addresses. As with llvm-symbolizer, the symbols come from f, not
// debug: its symbol table, or its dynamic symbols when it has none (a
// stripped binary). A nil debug means f itself.
func NewWithDebug(f, debug *elfrel.File) (*Symbolizer, error) {
	return newWithDebug(f, debug, Links{}, defaultTuning)
}

// Links says how an index finds the other files that a binary's DWARF
// refers to; see [NewWithLinks].
type Links struct {
	// DWO finds the split DWARF files of skeleton units, or is nil: the
	// skeletons are then indexed alone, as when their files are missing.
	DWO *DWO
	// Sup, if not nil, returns the supplementary file that link names,
	// read by [NewSup], or an error saying why it cannot (none found,
	// another file's ID), which becomes one of the index's
	// [Symbolizer.Warnings]. It is called at most once per index, when
	// the binary's debug information has such a link. Without the file,
	// entries that refer to it are indexed without what they take from
	// it (names, declaration lines), as llvm-symbolizer indexes them.
	Sup func(link elfrel.SupLink) (*Sup, error)
	// Lazy, for a linked binary (not a relocatable object) whose
	// .debug_info is large and that has no supplementary file, has its
	// units indexed one at a time, the first time an address of theirs
	// is looked up (see lazy.go): a profile that needs a few addresses
	// of a large file then pays for those, not for the whole file. The
	// file the DWARF is read from (debug, or f) must then stay open
	// until the Symbolizer is closed.
	Lazy bool
	// Warn, if not nil, is told, with Lazy, what goes wrong or is left
	// out when units are indexed after NewWithLinks returned (what
	// [Symbolizer.Warnings] and NewWithLinks's error say otherwise),
	// naming the file.
	Warn func(msg string)
}

// NewWithLinks is [NewWithDebug] for a binary whose DWARF refers to
// other files: its split DWARF files (see [DWO]), read the first time
// an address of their unit is looked up, and its supplementary file
// (see [Sup]), read first.
func NewWithLinks(f, debug *elfrel.File, links Links) (*Symbolizer, error) {
	return newWithDebug(f, debug, links, defaultTuning)
}

// tuning holds the thresholds of a build, which tests change.
type tuning struct {
	collect  uint64 // .debug_info and .debug_line above which the garbage is collected (see collectAbove)
	lazyMin  uint64 // .debug_info from which Links.Lazy takes effect (see lazyMinInfo)
	maxUnits int    // units indexed alone before the whole index is built (see lazyMaxUnits)
	minUnits int    // units with code below which the whole index is built (see lazyMinUnits)
	maxAsked int    // lookups after which the whole index is built (see lazyMaxAsked)
	bigUnit  uint64 // a unit of more than 1/bigUnit of .debug_info is indexed whole (see lazyBigUnit); 0: never
}

var defaultTuning = tuning{collect: collectAbove, lazyMin: lazyMinInfo, maxUnits: lazyMaxUnits,
	minUnits: lazyMinUnits, maxAsked: lazyMaxAsked, bigUnit: lazyBigUnit}

// newWithDebug is NewWithLinks with the thresholds tune.
func newWithDebug(f, debug *elfrel.File, links Links, tune tuning) (*Symbolizer, error) {
	if debug == nil {
		debug = f
	}
	s := &Symbolizer{name: f.Name}
	each := f.EachSymbol
	if !f.HasSymbols() && f.Type != elf.ET_REL {
		each = f.EachDynamicSymbol
	}
	// Under 64-bit PowerPC's ELFv1 ABI a function's symbol names its
	// descriptor in .opd: the name goes to the code it points to, as
	// llvm-symbolizer gives it.
	opd, err := f.FunctionDescriptors()
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("%v; its functions' symbols name their descriptors, not their code", err))
	}
	// The symbol table and the DWARF are indexed at the same time: they
	// fill different fields of s.
	syms := make(chan error, 1)
	go func() { syms <- s.buildSymbols(f, each, opd) }()
	qualify := f.Type == elf.ET_REL
	var l *elfrel.DebugLoader
	_, hasSup := debug.SupLink()
	lazy := links.Lazy && f.Type != elf.ET_REL && debug.Type != elf.ET_REL && !hasSup
	if lazy {
		l, err = debug.DebugLoaderWith(".debug_aranges")
		lazy = err == nil && l.Size(".debug_info") >= tune.lazyMin
	} else {
		l, err = debug.DebugLoader()
	}
	var sections Sections = l
	if lazy {
		// DWARF the lazy index cannot read (relocated sections, a bad
		// .debug_aranges) is left to the whole build, which says what
		// is wrong with it; so is a file of few units, from what the
		// lazy index read of it.
		z, lazyErr := newLazy(s, debug.ByteOrder, l, links, tune)
		if lazy = lazyErr == nil; errors.Is(lazyErr, errFewUnits) && z != nil {
			sections, err = z.wholeSections()
		}
	}
	if !lazy && err == nil {
		b := newBuilder(s, debug.ByteOrder, sections, qualify, runtime.GOMAXPROCS(0), minWalkBytes)
		b.dwo = links.DWO
		if link, ok := debug.SupLink(); ok && links.Sup != nil {
			var supErr error
			if b.sup, supErr = links.Sup(link); supErr != nil {
				s.warnings = append(s.warnings, supErr.Error())
			}
		}
		err = b.run()
	}
	if symErr := <-syms; symErr != nil {
		return nil, symErr
	}
	if err == nil && !lazy && l.Size(".debug_info")+l.Size(".debug_line") > tune.collect {
		runtime.GC()
	}
	return s.built(err)
}

// built completes s after build returned err: an object without DWARF
// keeps its symbols, and so does one whose DWARF would take more memory
// than the budget it is read within (a *membudget.ExceededError: a
// compressed section claiming gigabytes), with a warning; any other
// error fails.
func (s *Symbolizer) built(err error) (*Symbolizer, error) {
	if errors.Is(err, elfrel.ErrNoDWARF) {
		return s, nil
	}
	if _, ok := errors.AsType[*membudget.ExceededError](err); ok {
		keep := &Symbolizer{name: s.name, symAddr: s.symAddr, syms: s.syms, symNames: s.symNames, symFile: s.symFile}
		keep.warnings = append(s.warnings, fmt.Sprintf("%v; its symbols are used without its DWARF", err))
		return keep, nil
	}
	if err != nil {
		return nil, err
	}
	if s.lazy == nil {
		s.hasDWARF = len(s.units) > 0
	}
	return s, nil
}

// Name returns the name of the object, as given to Open or New.
func (s *Symbolizer) Name() string { return s.name }

// HasDWARF reports whether the object has DWARF compile units. Without
// them, frames carry only the function name from the ELF symbol table,
// and callers may want to say so once.
func (s *Symbolizer) HasDWARF() bool { return s.hasDWARF }

// Lazy reports whether s indexes units as addresses need them (see
// [Links.Lazy]): it then reads its file after it was made.
func (s *Symbolizer) Lazy() bool { return s.lazy != nil }

// Close releases the index. SourceLine returns ErrClosed afterwards.
func (s *Symbolizer) Close() error {
	if s.split != nil {
		s.split.close()
	}
	if s.lazy != nil {
		s.lazy.close()
	}
	*s = Symbolizer{name: s.name, closed: true}
	return nil
}

// SourceLine returns the frames for the absolute address addr, leaf
// (innermost inlined function) first and the function that contains the
// code last. An address outside every function gives no frames and no
// error.
//
// As llvm-symbolizer does, the compile unit is found from the units' own
// address ranges (never .debug_aranges), the innermost DW_TAG_subprogram
// or DW_TAG_inlined_subroutine covering addr gives the chain, the leaf's
// file and line come from the line table row at or before addr, each
// caller's from the DW_AT_call_file and DW_AT_call_line of the frame
// inlined into it, and the last frame's function name is replaced by the
// ELF symbol covering addr when there is one (and its file, if unknown,
// by the STT_FILE symbol before a local one: a bare name, line 0).
//
// Known differences from llvm-symbolizer 14: a function with neither a
// linkage name nor a symbol is named with its enclosing namespaces and
// classes (an inlined static helper of GCC's prints as "ns::helper" where
// llvm prints "helper"); a symbol of size 0 covers at most the rest of its
// section (llvm lets it cover any address up to the next symbol); symbols
// outside SHF_ALLOC sections are ignored; debug sections with a non-zero
// sh_addr are read correctly (llvm misreads them); .debug_aranges is
// ignored (llvm reads it unrelocated and finds no unit in GCC objects);
// and a unit DIE without DW_AT_low_pc or DW_AT_ranges is found through its
// functions' ranges (llvm finds nothing in it). (An index built with
// [Links.Lazy] finds the unit to read in .debug_aranges, when the file
// has one, as llvm does, then answers from that unit's own entries.) For native binaries
// indexed with their dwz supplementary file (see [Links]), functions
// named there are named, as addr2line names them and as llvm-symbolizer
// names them in the binary before dwz; llvm-symbolizer reads no such
// file and prints "??".
func (s *Symbolizer) SourceLine(addr uint64) ([]Frame, error) {
	if s.closed {
		return nil, ErrClosed
	}
	return s.AppendFrames(nil, addr), nil
}

// AppendFrames appends the frames SourceLine returns for addr to dst and
// returns the extended slice. It does not allocate when dst has room.
func (s *Symbolizer) AppendFrames(dst []Frame, addr uint64) []Frame {
	start := len(dst)
	dst = s.appendDWARFFrames(dst, addr)
	if i := searchHi(s.symAddr, addr) - 1; i >= 0 && addr < s.syms[i].end {
		sym := &s.syms[i]
		if len(dst) == start {
			dst = append(dst, Frame{})
		}
		last := &dst[len(dst)-1]
		last.Func = s.symbolName(sym)
		if last.File == "" && sym.file >= 0 {
			last.File = s.symFile[sym.file]
		}
	}
	return dst
}

// appendDWARFFrames appends the frames the DWARF gives addr: as LLVM, a
// skeleton unit's from its split file when that could be read, whatever
// subroutines the skeleton has (clang's -fsplit-dwarf-inlining copies
// some there), and its line table alone when the file has none at addr.
func (s *Symbolizer) appendDWARFFrames(dst []Frame, addr uint64) []Frame {
	if s.lazy != nil {
		// A unit's index, or the whole file's.
		if s = s.lazy.indexFor(addr); s == nil {
			return dst
		}
		if s.split == nil {
			return s.appendOwnFrames(dst, addr)
		}
	}
	c, ok := s.segmentAt(addr)
	if !ok {
		return dst
	}
	u := s.unitOfCode(c)
	if s.split != nil {
		if split := s.split.indexOf(u); split != nil {
			n := len(dst)
			if dst = split.appendOwnFrames(dst, addr); len(dst) > n {
				return dst
			}
			c = codeUnit(u)
		}
	}
	return s.appendUnitFrames(dst, c, u, addr)
}

// appendOwnFrames is appendDWARFFrames for the index of a split file,
// which has no split units of its own. (Keeping the two apart keeps dst
// out of a cycle of calls, which would make it escape to the heap.)
func (s *Symbolizer) appendOwnFrames(dst []Frame, addr uint64) []Frame {
	c, ok := s.segmentAt(addr)
	if !ok {
		return dst
	}
	return s.appendUnitFrames(dst, c, s.unitOfCode(c), addr)
}

// segmentAt returns the code of the segment holding addr (see segment
// codes), and false in a hole.
func (s *Symbolizer) segmentAt(addr uint64) (int32, bool) {
	if i := searchHi(s.segHi, addr); i < len(s.segHi) && addr >= s.segLo {
		if c := s.segCode[i]; c != segHole {
			return c, true
		}
	}
	return 0, false
}

// unitOfCode returns the unit of the segment with code c, not a hole.
func (s *Symbolizer) unitOfCode(c int32) int32 {
	if c < 0 {
		return codeUnit(c)
	}
	return int32(s.unitOf(c))
}

// appendUnitFrames appends the DWARF frames of addr in a segment of unit
// u with code c, not a hole.
func (s *Symbolizer) appendUnitFrames(dst []Frame, c, u int32, addr uint64) []Frame {
	if c < 0 {
		// No subroutine: the line table alone, as llvm-symbolizer does.
		if f, ok := s.lineFrame(&s.units[u], addr); ok {
			dst = append(dst, f)
		}
		return dst
	}
	n := &s.nodes[c]
	leaf, _ := s.lineFrame(&s.units[u], addr)
	leaf.Func, leaf.StartLine = s.names[n.fn], int(n.startLine)
	dst = append(dst, leaf)
	for n.parent >= 0 {
		p := &s.nodes[n.parent]
		f := Frame{Func: s.names[p.fn], StartLine: int(p.startLine), Line: int(n.callLine), Column: int(n.callCol)}
		if n.callFile >= 0 {
			f.File = s.files[n.callFile]
		}
		dst = append(dst, f)
		n = p
	}
	return dst
}

// unitOf returns the index of the unit node n belongs to: the last whose
// nodes start at or before n (a unit without nodes starts where the next
// one does).
func (s *Symbolizer) unitOf(n int32) int {
	lo, hi := 0, len(s.units)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.units[m].nodeLo > n {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// lineFrame returns the file, line and column of the line table row for
// addr in unit u. ok is false when no sequence covers addr.
func (s *Symbolizer) lineFrame(u *unit, addr uint64) (f Frame, ok bool) {
	if u.table < 0 {
		return f, false
	}
	t := &s.tables[u.table]
	i := int(t.seqLo) + searchHi(s.seqHi[t.seqLo:t.seqHi], addr)
	if i == int(t.seqHi) || s.seqs[i].lo > addr {
		return f, false
	}
	q := &s.seqs[i]
	r, ok := rowAt(s.lines[q.start:q.end], uint32(min(addr-q.lo, math.MaxUint32))) // see sequence
	if !ok {
		return f, false
	}
	if int(r.file) >= len(t.files) || t.files[r.file] < 0 {
		return f, true // llvm: an invalid file number leaves file and line unknown
	}
	f.File, f.Line, f.Column = s.files[t.files[r.file]], int(r.line), int(r.col)
	return f, true
}

// searchHi returns the smallest i with keys[i] > x, or len(keys), for
// sorted keys.
func searchHi(keys []uint64, x uint64) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}
