// Package objtool is jitpprof's object tool: the [driver.ObjTool] that
// pprof asks for the symbols, source lines and disassembly of the
// binaries a profile names, answered in process instead of by running
// binutils (nm, objdump, addr2line or llvm-symbolizer) as upstream pprof
// does.
//
// It reads ELF files with package elfrel: 64-bit executables (PIE or
// not), shared libraries and kernel images of any machine, and the
// relocatable JIT objects, whose section headers carry load addresses,
// 64- or 32-bit, of the machines whose relocations elfrel applies.
// Each file is parsed once per [Tool], however many mappings and
// profiles use it: its DWARF is indexed by package jitsym, whose frames
// are those of llvm-symbolizer --inlining, inline frames included, and
// its machine code is decoded by package disasm. Separate debug files
// are found by build ID and .gnu_debuglink as llvm-symbolizer finds them;
// compressed debug sections are read. A Go binary without DWARF is read
// through the Go runtime's own table (gotable.go).
//
// Mach-O (thin or fat, with its .dSYM), PE and 32-bit ELF executables
// and shared libraries are read with the standard library (foreign.go)
// and indexed by the same DWARF decoder, with the base
// computed as upstream computes it for each format. What is still not
// read (relocatable ELF objects of other machines, files the standard
// library cannot parse) goes to a fallback tool, if one is given, and is
// reported once per file either way.
//
// [driver.ObjTool]: https://pkg.go.dev/github.com/google/pprof/driver#ObjTool
package objtool

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/debuginfod"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/membudget"
	"github.com/jitpprof/pprof/internal/oncemap"
	"github.com/jitpprof/pprof/internal/plt"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
	"github.com/jitpprof/pprof/internal/srcfile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// Options configures a Tool.
type Options struct {
	// DebugDirs are the roots searched for separate debug files; nil
	// means [DefaultDebugDir].
	DebugDirs []string
	// Fallback, if not nil, handles the files Tool cannot read.
	Fallback gdriver.ObjTool
	// Warn, if not nil, is told once per file that Fallback handles it,
	// and why, and what of a file's debug information cannot be used.
	Warn func(msg string)
	// Debuginfod, if not nil, fetches the separate debug file of a
	// binary with a build ID when none is found locally, as
	// llvm-symbolizer does when DEBUGINFOD_URLS is set.
	Debuginfod *debuginfod.Client
	// MaxDecompressed is the most the compressed debug sections of all
	// the files the Tool reads may decompress to, in bytes, in all; 0
	// means DefaultMaxDecompressed. A section that would take more is
	// not read: its file is symbolized without its DWARF, with a
	// warning naming the file, the limit and the flag that raises it.
	MaxDecompressed int64
	// JIT is the run's cache of JIT objects, from which the code views
	// of JIT objects that hold their code (jitdumps) are answered. Nil
	// gives the Tool a cache of its own, closed with it.
	JIT *jprofile.Cache
	// Syntax is the assembler syntax of Disasm's text; the zero value,
	// SyntaxAuto, is Go's for Go binaries (and their listings those of
	// go tool pprof, see goListing) and objdump's for the others.
	Syntax Syntax
}

// DefaultMaxDecompressed is the default of Options.MaxDecompressed:
// 1 GiB, more than the DWARF of most programs once decompressed (a
// large C++ program's is hundreds of MiB; a whole LLVM's a few GiB), far
// less than a few KiB of Zstandard or a few MiB of zlib can claim.
const DefaultMaxDecompressed = 1 << 30

// MaxDecompressedFlag is the flag of jitpprof's command line that sets
// Options.MaxDecompressed, in MiB, which its messages name.
const MaxDecompressedFlag = "-max_debug_mb"

// A Tool is an in-process [gdriver.ObjTool]. It is safe for concurrent
// use. Close releases the files it keeps open.
type Tool struct {
	opts    Options
	inflate *membudget.Budget // Options.MaxDecompressed
	sources *srcfile.Guard    // the source files answers name
	bins    oncemap.Map[string, *binFile]
	jit     *jprofile.Cache
	ownsJIT bool // jit is the Tool's own, closed with it
	// foreign holds the binaries read with the standard library:
	// Mach-O, PE, and ELF files of another class or machine.
	foreign oncemap.Map[string, *foreignEntry]
	// sups holds the supplementary files of debug information that dwz
	// shrank, by file and the ID asked of it.
	sups oncemap.Map[supKey, *supEntry]

	mu          sync.Mutex
	fellBack    map[string]bool // files handed to the fallback
	said        map[string]bool // what sayOnce said
	closeOnce   sync.Once
	prefetching sync.WaitGroup
	answered    answered // SourceLine answers since the last collection
}

// JIT returns the Tool's cache of JIT objects: Options.JIT, or the one
// it made, whose LLVM dumps it indexes (see IndexFrames).
func (t *Tool) JIT() *jprofile.Cache { return t.jit }

// New returns a Tool configured by o.
func New(o Options) *Tool {
	if o.DebugDirs == nil {
		o.DebugDirs = []string{DefaultDebugDir}
	}
	if o.MaxDecompressed <= 0 {
		o.MaxDecompressed = DefaultMaxDecompressed
	}
	t := &Tool{opts: o, jit: o.JIT, fellBack: map[string]bool{}, said: map[string]bool{},
		inflate: membudget.New(o.MaxDecompressed, "compressed debug sections decompressed", MaxDecompressedFlag),
		sources: srcfile.New(o.Warn)}
	t.answered.after = collectAfter
	if t.jit == nil {
		t.jit, t.ownsJIT = jprofile.NewCache(jprofile.CacheOptions{Index: t}), true
	}
	return t
}

// safeFrames returns frames with their files named as pprof's source
// views may open them (see package srcfile: a FIFO or a device is named
// so that they do not find it, and said once), a copy if any changes.
func (t *Tool) safeFrames(frames []gdriver.Frame) []gdriver.Frame {
	for i := range frames {
		if name := t.sources.Name(frames[i].File); name != frames[i].File {
			out := slices.Clone(frames)
			for k := i; k < len(out); k++ {
				out[k].File = t.sources.Name(out[k].File)
			}
			return out
		}
	}
	return frames
}

// SetMaxDecompressed changes Options.MaxDecompressed to n bytes (0:
// the default), for a command line parsed after the Tool was made. What
// was decompressed before still counts.
func (t *Tool) SetMaxDecompressed(n int64) {
	if n <= 0 {
		n = DefaultMaxDecompressed
	}
	t.inflate.SetLimit(n)
}

// binFile is one ELF file, parsed once.
type binFile struct {
	path    string
	f       *elfrel.File // kept open for Disasm; nil if err
	err     error
	buildID string

	indexOnce sync.Once
	index     *jitsym.Symbolizer
	indexErr  error
	debug     *elfrel.File // the separate debug file a lazy index reads, or nil

	goOnce sync.Once
	gotab  *gopclntab.Table // see goTable

	symsOnce sync.Once
	syms     []symbol // sorted by address; see symbols.go
	symsErr  error

	armOnce sync.Once
	arm     map[int]*armSection // a 32-bit ARM file's code sections; see armMapping

	pltOnce sync.Once
	plt     []plt.Entry // its PLT stubs

	goListOnce sync.Once
	goList     *goListing // a Go binary's listing in Go syntax; see goListingFor

	answers answers // what Prefetch found
}

// load returns the parsed ELF file at path, parsing it on first use.
func (t *Tool) load(path string) *binFile {
	b, _ := t.bins.Get(path, func() *binFile {
		b := &binFile{path: path}
		b.f, b.err = elfrel.Open(path)
		if b.err == nil {
			b.f.SetInflateBudget(t.inflate)
			if id, err := b.f.BuildID(); err == nil && id != nil {
				b.buildID = fmt.Sprintf("%x", id)
			}
		}
		return b
	})
	return b
}

// Index returns the DWARF and symbol index of the ELF file at path,
// building it on first use; a JIT object's index serves both the JIT
// stage and the code views.
func (t *Tool) Index(path string) (*jitsym.Symbolizer, error) {
	b := t.load(path)
	if b.err != nil {
		return nil, b.err
	}
	return t.indexOf(b)
}

func (t *Tool) indexOf(b *binFile) (*jitsym.Symbolizer, error) {
	b.indexOnce.Do(func() {
		var debug *elfrel.File
		if b.f.Type != elf.ET_REL && b.f.Section(".debug_info") < 0 && b.f.Section(".zdebug_info") < 0 {
			id, _ := b.f.BuildID()
			debug = t.debugFile(b.path, b.f, id)
		}
		debugPath := b.path
		if debug != nil {
			debugPath = debug.Name
		}
		links := jitsym.Links{DWO: t.dwoFor(b.path), Sup: t.supFor(b.path, debugPath), Lazy: true, Warn: t.warn}
		b.index, b.indexErr = jitsym.NewWithLinks(b.f, debug, links)
		if debug != nil {
			if b.index != nil && b.index.Lazy() {
				b.debug = debug // read as addresses need it
			} else {
				debug.Close()
			}
		}
		t.indexed(b.path, b.index, b.indexErr)
	})
	return b.index, b.indexErr
}

// indexed says what of the index idx of the file at path was left out,
// or, if it failed with err, why: pprof's symbolizer drops the errors of
// the lines it asks for without a word.
func (t *Tool) indexed(path string, idx *jitsym.Symbolizer, err error) {
	if err != nil {
		t.sayOnce("index "+path, fmt.Sprintf("%s: %s; no function names or source lines are read from it", safename.String(path), reason(err)))
	}
	if idx != nil && t.opts.Warn != nil {
		for _, w := range idx.Warnings() {
			t.opts.Warn(w)
		}
	}
}

// warn passes msg to Options.Warn, if set.
func (t *Tool) warn(msg string) {
	if t.opts.Warn != nil {
		t.opts.Warn(msg)
	}
}

// reason returns err's message without the file name an error of
// package elfrel starts with.
func reason(err error) string {
	if r, ok := err.(interface{ Reason() string }); ok {
		return r.Reason()
	}
	return err.Error()
}

// Close closes every file the Tool opened. The Tool must not be used
// afterwards.
func (t *Tool) Close() error {
	var first error
	t.closeOnce.Do(func() {
		t.prefetching.Wait()
		if t.ownsJIT {
			t.jit.Close()
		}
		for _, e := range t.foreign.Drain() {
			if e.b != nil {
				if err := e.b.close(); err != nil && first == nil {
					first = err
				}
			}
			if e.index != nil {
				e.index.Close()
			}
		}
		for _, b := range t.bins.Drain() {
			if b.f != nil {
				if err := b.f.Close(); err != nil && first == nil {
					first = err
				}
			}
			if b.index != nil {
				b.index.Close()
			}
			if b.debug != nil {
				if err := b.debug.Close(); err != nil && first == nil {
					first = err
				}
			}
		}
	})
	return first
}

// fallBack hands the file name to the fallback tool, saying so once;
// without a fallback, it says once that the file cannot be read here and
// how to have upstream's binutils read it.
func (t *Tool) fallBack(name, why string) (gdriver.ObjTool, bool) {
	t.mu.Lock()
	seen := t.fellBack[name]
	t.fellBack[name] = true
	t.mu.Unlock()
	if !seen && t.opts.Warn != nil {
		if t.opts.Fallback != nil {
			t.opts.Warn(fmt.Sprintf("%s: %s; using binutils for it", name, why))
		} else {
			t.opts.Warn(fmt.Sprintf("%s: %s, which jitpprof's object tool does not read; "+
				"run with -objtool=binutils (or PPROF_OBJTOOL=binutils) to have binutils read it", name, why))
		}
	}
	return t.opts.Fallback, t.opts.Fallback != nil
}

// Open opens the binary name for the mapping [start, limit) at file
// offset offset, computing the base as upstream pprof does. Its errors
// read as upstream pprof's do.
func (t *Tool) Open(name string, start, limit, offset uint64, relocationSymbol string) (gdriver.ObjFile, error) {
	if _, err := os.Stat(name); err != nil {
		return nil, err
	}
	magic, err := readMagic(name)
	if err != nil {
		return nil, err
	}
	if isJITDump(magic) {
		return t.openJITCode(name, start, limit, offset)
	}
	if !bytes.Equal(magic, []byte(elf.ELFMAG)) {
		// Not a word about files of no object format: pprof tries the
		// first command-line argument as a binary, and it is often a
		// profile.
		format := formatOf(magic)
		if format == "" {
			return nil, fmt.Errorf("unrecognized binary format: %s", name)
		}
		e := t.loadForeign(name, magic)
		if e.err == nil {
			return t.openForeignFile(e, start, limit, offset)
		}
		if fb, ok := t.fallBack(name, format+" that could not be read ("+e.err.Error()+")"); ok {
			return fb.Open(name, start, limit, offset, relocationSymbol)
		}
		return nil, e.err
	}
	b := t.load(name)
	if b.err != nil {
		var unsupported *elfrel.UnsupportedError
		if errors.As(b.err, &unsupported) && unsupported.Section == "" {
			// Another class or machine: the standard library reads
			// executables and shared libraries; relocatable objects,
			// whose DWARF needs relocating, are left to the fallback.
			e := t.loadForeign(name, magic)
			if e.err == nil {
				return t.openForeignFile(e, start, limit, offset)
			}
			why := "an ELF file of a kind (" + unsupported.Msg + ")"
			if !errors.Is(e.err, errNotForeign) {
				why += " that could not be read (" + e.err.Error() + ")"
			} else {
				why = "a relocatable ELF file of a kind (" + unsupported.Msg + ")"
			}
			if fb, ok := t.fallBack(name, why); ok {
				return fb.Open(name, start, limit, offset, relocationSymbol)
			}
			if !errors.Is(e.err, errNotForeign) {
				return nil, e.err
			}
		}
		return nil, fmt.Errorf("error reading ELF file %s: %w", name, b.err)
	}
	m := mapping{start: start, limit: limit, offset: offset}
	// Like upstream: only a kernel image, or a mapping that is not page
	// aligned, has its relocation symbol looked up.
	aligned := func(a uint64) bool { return a%pageSize == 0 }
	if strings.Contains(name, "vmlinux") || !aligned(start) || !aligned(limit) || !aligned(offset) {
		if relocationSymbol == "" {
			relocationSymbol = "_stext"
		}
		v, ok, err := symbolValue(b.f, relocationSymbol)
		if err != nil {
			return nil, fmt.Errorf("error reading ELF file %s: %w", name, err)
		}
		if ok {
			m.kernelOffset = &v
		}
	}
	if _, err := getBase(b.f.Type, textProgHeader(b.f), m.kernelOffset, start, limit, offset); err != nil {
		return nil, fmt.Errorf("error reading ELF file %s: could not identify base for %s: %w", name, name, err)
	}
	return &objFile{t: t, b: b, m: m}, nil
}

// readMagic returns the first 4 bytes of the file name.
func readMagic(name string) ([]byte, error) {
	f, err := regfile.Open(name) // a FIFO named in a profile would block os.Open
	if err != nil {
		return nil, fmt.Errorf("error opening %s: %w", name, &fs.PathError{Op: "open", Path: name, Err: err})
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil {
		return nil, fmt.Errorf("error reading magic number from %s: %w", name, err)
	}
	return magic, nil
}

// symbolValue returns the value of the first symbol called name in f's
// symbol table.
func symbolValue(f *elfrel.File, name string) (v uint64, ok bool, err error) {
	errFound := errors.New("found")
	err = f.EachSymbol(true, func(_ int, s *elfrel.Symbol) error {
		if s.Name == name {
			v, ok = s.Value, true
			return errFound
		}
		return nil
	})
	if err == errFound {
		err = nil
	}
	return v, ok, err
}

// formatOf names the object file format, other than ELF, that magic
// starts, as far as upstream pprof's binutils tell them apart, or "".
func formatOf(magic []byte) string {
	le, be := binary.LittleEndian.Uint32(magic), binary.BigEndian.Uint32(magic)
	switch {
	case le == macho.Magic32 || le == macho.Magic64 || be == macho.Magic32 || be == macho.Magic64:
		return "a Mach-O file"
	case le == macho.MagicFat || be == macho.MagicFat:
		return "a fat Mach-O file"
	case string(magic[:2]) == "MZ":
		return "a PE file"
	}
	return ""
}
