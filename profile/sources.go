package profile

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/regfile"
)

// A Kind is the kind of file a JIT object is read from: the three JIT
// sources jitpprof reads.
type Kind int

const (
	// LLVMDump is NAME.elf, the relocatable object with load addresses
	// that LLVM's debugger interface builds, with an optional NAME.meta
	// (see jitlistener/ and jitsnap). Symbolized from its DWARF: file,
	// line and inline frames.
	LLVMDump Kind = iota
	// PerfMap is perf-PID.map, the text list of code ranges and names
	// that V8, the JVM, .NET, CPython 3.12+, wasmtime, LuaJIT and LLVM
	// write for Linux perf. Function names only (V8's carry a script
	// position; see [SplitV8Name]).
	PerfMap
	// JITDump is jit-PID.dump, perf's binary JIT format: names, line
	// tables and the code bytes.
	JITDump
)

func (k Kind) String() string {
	switch k {
	case LLVMDump:
		return "LLVM dump"
	case PerfMap:
		return "perf map"
	case JITDump:
		return "jitdump"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// A Source is one kind of JIT source: how its files are found in a
// directory, the code an object of it claims, and how the addresses of
// that code are symbolized. [Sources] lists the kinds jitpprof reads.
type Source interface {
	// Kind names the kind.
	Kind() Kind
	// Match reports whether a file called name is of this kind.
	Match(name string) bool
	// Group picks the objects of this kind among the names of a
	// directory's files: the names of each object's files, its own file
	// first.
	Group(names []string) [][]string
	// Load reads an object from its files (paths, as Group grouped
	// them): the code ranges it claims, in Object.Sections.
	Load(files []string) (*Object, error)
	// Open opens obj, an object Load read, to symbolize its addresses.
	Open(obj *Object) (FrameSource, error)
}

// A FrameSource gives the frames of the addresses of one JIT object. It
// is safe for concurrent use.
type FrameSource interface {
	// Frames returns the frames of addr, leaf first, or none.
	Frames(addr uint64) []Frame
	// Close releases the object.
	Close() error
}

// Sources returns the JIT source kinds jitpprof reads: LLVM dumps, perf
// maps and jitdump files.
func Sources() []Source { return []Source{llvmDumps{}, perfMaps{}, jitDumps{}} }

// SourceOf returns the Source of kind k.
func SourceOf(k Kind) Source { return Sources()[k] }

// kindOf returns the kind of JIT source a file name is, if any.
func kindOf(name string) (Kind, bool) {
	for _, s := range Sources() {
		if s.Match(name) {
			return s.Kind(), true
		}
	}
	return 0, false
}

// llvmDumps are NAME.elf with an optional NAME.meta.
type llvmDumps struct{}

func (llvmDumps) Kind() Kind { return LLVMDump }

func (llvmDumps) Match(name string) bool {
	ext := filepath.Ext(name)
	return ext == elfExt || ext == metaExt
}

func (s llvmDumps) Group(names []string) [][]string {
	byStem := map[string][]string{}
	var stems []string
	for _, name := range names {
		if !s.Match(name) {
			continue
		}
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if _, ok := byStem[stem]; !ok {
			stems = append(stems, stem)
		}
		byStem[stem] = append(byStem[stem], name)
	}
	out := make([][]string, 0, len(stems))
	for _, stem := range stems {
		g := byStem[stem]
		rank := func(name string) int { // NAME.elf first
			if filepath.Ext(name) == elfExt {
				return 0
			}
			return 1
		}
		slices.SortFunc(g, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
		out = append(out, g)
	}
	return out
}

func (llvmDumps) Load(files []string) (*Object, error) { return loadLLVMDump(files) }

// Open reads the object's DWARF with jitsym. (jitpprof's driver asks its
// object tool instead, which shares the index with the code views.)
func (llvmDumps) Open(obj *Object) (FrameSource, error) {
	s, err := jitsym.Open(obj.Path)
	if err != nil {
		return nil, err
	}
	return dwarfFrames{s}, nil
}

// dwarfFrames gives an LLVM dump's frames from its DWARF.
type dwarfFrames struct{ s *jitsym.Symbolizer }

func (d dwarfFrames) Frames(addr uint64) []Frame {
	fs, _ := d.s.SourceLine(addr)
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = Frame{Func: f.Func, File: f.File, Line: f.Line, Column: f.Column, StartLine: f.StartLine}
	}
	return out
}

func (d dwarfFrames) Close() error { return d.s.Close() }

// singleFiles are kinds of one file an object: perf maps, jitdumps.
type singleFiles struct {
	prefix, ext string
}

func (s singleFiles) Match(name string) bool {
	return strings.HasPrefix(name, s.prefix) && filepath.Ext(name) == s.ext
}

func (s singleFiles) group(names []string) [][]string {
	var out [][]string
	for _, name := range names {
		if s.Match(name) {
			out = append(out, []string{name})
		}
	}
	return out
}

// perfMaps are perf-PID.map files.
type perfMaps struct{}

func (perfMaps) Kind() Kind                            { return PerfMap }
func (perfMaps) Match(name string) bool                { return singleFiles{"perf-", ".map"}.Match(name) }
func (perfMaps) Group(names []string) [][]string       { return singleFiles{"perf-", ".map"}.group(names) }
func (perfMaps) Load(files []string) (*Object, error)  { return loadPerfMap(files[0]) }
func (perfMaps) Open(obj *Object) (FrameSource, error) { return obj.OpenSource() }

// jitDumps are jit-PID.dump files.
type jitDumps struct{}

func (jitDumps) Kind() Kind                            { return JITDump }
func (jitDumps) Match(name string) bool                { return singleFiles{"jit-", ".dump"}.Match(name) }
func (jitDumps) Group(names []string) [][]string       { return singleFiles{"jit-", ".dump"}.group(names) }
func (jitDumps) Load(files []string) (*Object, error)  { return loadJITDump(files[0]) }
func (jitDumps) Open(obj *Object) (FrameSource, error) { return openSource(obj) }

// openSource opens a perf map or jitdump as a FrameSource.
func openSource(obj *Object) (FrameSource, error) {
	r, err := obj.OpenSource()
	if err != nil {
		return nil, err
	}
	return r, nil
}

// IsJITMapping reports whether m is a mapping the stage made for a JIT
// object: Start 0, Limit ^uint64(0), and a file of one of the JIT source
// kinds.
func IsJITMapping(m *profile.Mapping) bool {
	if m == nil || m.Start != 0 || m.Limit != ^uint64(0) {
		return false
	}
	k, ok := kindOf(filepath.Base(m.File))
	return ok && (k != LLVMDump || filepath.Ext(m.File) == elfExt)
}

// A Frame is one source-level frame of an address of a JIT object; the
// fields mean what they mean in pprof's driver.Frame.
type Frame struct {
	Func      string
	File      string
	Line      int
	Column    int
	StartLine int
}

// A SourceReader answers frame queries for the addresses of a perf map
// or jitdump object, reading the names and line tables its samples need
// from the file as they are asked for (the object keeps only where they
// are). It is safe for concurrent use; Close releases the file.
type SourceReader struct {
	obj *Object
	f   *os.File

	mu    sync.Mutex
	names map[int64]Frame               // perf map entries' frames, by their names' offsets
	codes map[*jitdump.Code]*sourceCode // jitdump code read so far
}

// sourceCode is what a SourceReader read of one jitdump code: the frame
// its name gives and its line table.
type sourceCode struct {
	frame Frame
	lines []jitdump.Line
}

// OpenSource opens o, a perf map or jitdump, for [SourceReader.Frames].
// The file must still hold what Load read (a perf map may have grown:
// it is an append log).
func (o *Object) OpenSource() (*SourceReader, error) {
	if o.perfMap == nil && o.dump == nil {
		return nil, fmt.Errorf("%s: a %v is not read as a source of frames", o.Path, o.Kind)
	}
	f, err := regfile.Open(o.Path)
	if err != nil {
		return nil, &ObjectError{File: o.Path, Err: err}
	}
	return &SourceReader{obj: o, f: f, names: map[int64]Frame{}, codes: map[*jitdump.Code]*sourceCode{}}, nil
}

// Close closes the file.
func (r *SourceReader) Close() error { return r.f.Close() }

// An EHFrame is the call frame information a JIT wrote for one piece of
// code, for unwinding stacks through it.
type EHFrame struct {
	Data []byte // an .eh_frame section's bytes
	// Addr is where the .eh_frame was in memory, if the writer said
	// (LLVM's ORC, one table for all the code of an object); 0 if not,
	// and then its first entry covers the code at Code from its start
	// (V8, one table per piece of code).
	Addr      uint64
	Code      uint64 // the address of the code
	Machine   elf.Machine
	ByteOrder binary.ByteOrder
}

// EHFrame returns the call frame information the writer of a jitdump gave
// the code at addr (its CODE_UNWINDING_INFO record); nil if o is not a
// jitdump or has none for the code there.
func (o *Object) EHFrame(addr uint64) (*EHFrame, error) {
	if o.dump == nil {
		return nil, nil
	}
	c := o.dump.Lookup(addr)
	if c == nil || !c.HasEHFrame() {
		return nil, nil
	}
	f, err := regfile.Open(o.Path)
	if err != nil {
		return nil, &ObjectError{File: o.Path, Err: err}
	}
	defer f.Close()
	b, err := o.dump.EHFrame(f, c)
	if err != nil || b == nil {
		if err != nil {
			err = &ObjectError{File: o.Path, Err: err}
		}
		return nil, err
	}
	return &EHFrame{Data: b, Addr: c.EHFrameAddr(), Code: c.Addr, Machine: elf.Machine(o.dump.Machine), ByteOrder: o.dump.ByteOrder}, nil
}

// Frames returns the frames of addr: one frame, or none if no entry
// covers addr (or its name cannot be read back).
func (r *SourceReader) Frames(addr uint64) []Frame {
	switch o := r.obj; {
	case o.perfMap != nil:
		seg, ok := o.perfMap.Lookup(addr)
		if !ok {
			return nil
		}
		r.mu.Lock()
		f, ok := r.names[seg.NameOff]
		if !ok {
			name, err := o.perfMap.Name(r.f, seg)
			if err != nil {
				r.mu.Unlock()
				return nil
			}
			f = NameFrame(name)
			r.names[seg.NameOff] = f
		}
		r.mu.Unlock()
		return []Frame{f}
	case o.dump != nil:
		c := o.dump.Lookup(addr)
		if c == nil {
			return nil
		}
		r.mu.Lock()
		sc, ok := r.codes[c]
		if !ok {
			sc = &sourceCode{frame: NameFrame(c.Name)}
			sc.lines, _ = o.dump.Lines(r.f, c) // an unreadable table leaves the name
			r.codes[c] = sc
		}
		r.mu.Unlock()
		return []Frame{frameAt(sc.frame, sc.lines, addr)}
	}
	return nil
}

// JITDumpFrame is the frame of addr in the jitdump code c, whose line
// table is lines: the function (V8's names split into function, script
// and line, see [SplitV8Name]; PHP's named by their function) and the
// line of the entry covering addr.
// The JIT stage and the object tool's code views give the same.
func JITDumpFrame(c *jitdump.Code, lines []jitdump.Line, addr uint64) Frame {
	return frameAt(NameFrame(c.Name), lines, addr)
}

// frameAt is JITDumpFrame, given the frame of the code's name, f.
func frameAt(f Frame, lines []jitdump.Line, addr uint64) Frame {
	start := f.StartLine
	if l, ok := jitdump.LineAt(lines, addr); ok {
		// Node 20 writes some line entries whose file name is not the
		// script's (a few characters of something else): V8 code keeps
		// the script from its name, with the entry's line.
		if f.File == "" {
			f.File = l.File
		}
		f.Line, f.StartLine = l.Line, start
		if start == 0 {
			f.StartLine = lines[0].Line
		}
	}
	return f
}

// v8Name matches the names V8 gives JavaScript code in perf maps and
// jitdumps: "JS:*work /app.js:3:14" (the mark is the tier: ~ Ignition,
// ^ Sparkplug, + Maglev, * TurboFan), also with "LazyCompile:" or
// "Function:" in older versions.
var v8Name = regexp.MustCompile(`^(?:JS|LazyCompile|Function|Script):[*~^+]?(\S*) (.+):(\d+):(\d+)$`)

// v8WasmName matches the names V8 gives WebAssembly code: the function's
// name in the module's name section (any text; "wasm-function[3]" if it
// has none), its index in the module ("<anonymous>" for a wrapper) and
// the tier that compiled it: "JS:hash_loop-0-turbofan".
var v8WasmName = regexp.MustCompile(`^(?:JS|Function):(.+)-(?:\d+|<anonymous>)-(?:liftoff|turbofan|none|interpreter)$`)

// SplitV8Name splits a V8 code name into the function, its script and
// the line the function starts on: "JS:*work /app.js:3:14" gives "work",
// "/app.js", 3. The tier mark is dropped, so that one function's code in
// several tiers adds up to one row; an anonymous function is
// "(anonymous)". A WebAssembly function's name gives the name alone,
// without its index and tier ("JS:hash_loop-0-turbofan" gives
// "hash_loop", "", 0): V8 names no module, and one function's Liftoff
// and TurboFan code add up (two functions of one name in a module do
// too). Other names are left whole (ok false).
func SplitV8Name(name string) (fn, file string, line int, ok bool) {
	// The regular expressions run on the names that can match them:
	// they cost a microsecond a name, for every address symbolized.
	prefix, rest, _ := strings.Cut(name, ":")
	switch prefix {
	case "JS", "Function":
		if strings.HasSuffix(rest, "-liftoff") || strings.HasSuffix(rest, "-turbofan") || strings.HasSuffix(rest, "-none") || strings.HasSuffix(rest, "-interpreter") {
			if m := v8WasmName.FindStringSubmatch(name); m != nil {
				return m[1], "", 0, true
			}
		}
	case "LazyCompile", "Script":
	default:
		return "", "", 0, false
	}
	m := v8Name.FindStringSubmatch(name)
	if m == nil {
		return "", "", 0, false
	}
	line, err := strconv.Atoi(m[3])
	if err != nil {
		return "", "", 0, false
	}
	fn = m[1]
	if fn == "" {
		fn = "(anonymous)"
	}
	return fn, m[2], line, true
}

// phpName matches the names PHP's JIT (opcache.jit_debug=0x10 or 0x20)
// gives the code it compiles: "JIT$fib", "JIT$Calc::twice" and
// "JIT$/srv/app/index.php" (a script's top level) compiled whole, or
// "TRACE-3$fib$12", a trace of the tracing JIT, which starts in fib at
// line 12. Its own stubs, "JIT$$interrupt_handler", are not.
var phpName = regexp.MustCompile(`^(?:JIT\$([^$].*)|TRACE-\d+\$(.+)\$\d+)$`)

// NameFrame is the frame of a perf map's or jitdump's code name. V8's
// names are split (see [SplitV8Name]); PHP's name the function the code
// is of, or a trace starts in, so that a function's traces add up to one
// row, as V8's tiers do (PHP names no file, and the line a trace starts
// on is not the function's). Others are the function's name whole.
func NameFrame(name string) Frame {
	if fn, file, line, ok := SplitV8Name(name); ok {
		return Frame{Func: fn, File: file, Line: line, StartLine: line}
	}
	if strings.HasPrefix(name, "JIT$") || strings.HasPrefix(name, "TRACE-") {
		if m := phpName.FindStringSubmatch(name); m != nil {
			return Frame{Func: m[1] + m[2]}
		}
	}
	return Frame{Func: name}
}

// loadPerfMap reads a perf map's ranges into an Object.
func loadPerfMap(path string) (*Object, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	defer f.Close()
	m, err := perfmap.Parse(f)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	obj := &Object{Kind: PerfMap, Path: path, perfMap: m}
	for _, r := range m.Ranges() {
		obj.Sections = append(obj.Sections, Section{Start: r[0], Size: r[1] - r[0]})
	}
	st := m.Stats
	if st.Malformed > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d lines are not START SIZE NAME (the first is line %d); they are ignored", st.Malformed, st.FirstBad))
	}
	if st.Wrapping > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d entries wrap around the address space; they are ignored", st.Wrapping))
	}
	if st.Overlaps > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d entries overlap earlier ones; where they do, the entry later in the file wins", st.Overlaps))
	}
	if len(obj.Sections) == 0 {
		return nil, &ObjectError{File: path, Err: fmt.Errorf("no code ranges (of %d entries)", st.Entries)}
	}
	return obj, nil
}

// loadJITDump reads a jitdump file's final state into an Object.
func loadJITDump(path string) (*Object, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	d, err := jitdump.Read(f, st.Size(), path)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	obj := &Object{Kind: JITDump, Path: path, dump: d, Warnings: d.Warnings}
	for _, c := range d.Code {
		if n := len(obj.Sections); n > 0 && obj.Sections[n-1].Limit() == c.Addr {
			obj.Sections[n-1].Size += c.Size
			continue
		}
		obj.Sections = append(obj.Sections, Section{Start: c.Addr, Size: c.Size})
	}
	if len(obj.Sections) == 0 {
		return nil, &ObjectError{File: path, Err: fmt.Errorf("no code loaded")}
	}
	return obj, nil
}
