package profile

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/safename"
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
	// position; see [NameFrame]).
	PerfMap
	// JITDump is jit-PID.dump, perf's binary JIT format: names, line
	// tables and the code bytes, and when each piece of code was loaded,
	// moved or freed.
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
// directory and how an object is read from them. What an object of the
// kind answers afterwards (its frames, call frame information, code
// bytes, code over time) is kept by the [Object] its Load returns.
// [Sources] lists the kinds jitpprof reads; the interface is sealed.
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
	// them): the code ranges it claims, in Object.Sections, and what it
	// needs to answer for them. A [Cache] calls it once per object. A
	// perf map or jitdump owned by another user than the one pprof runs
	// as, or root, is refused with a *NotOwnedError, as perf refuses it
	// (see [Cache.SetAnyOwner]).
	Load(files []string) (*Object, error)
	// load is Load, with o.
	load(files []string, o loadOptions) (*Object, error)

	// own reports whether a file called name is an object's own file,
	// the one its mapping is named after (NAME.elf, not NAME.meta).
	own(name string) bool
	// rank orders the kinds by what they know, where two claim the same
	// code: an LLVM dump (DWARF, exact sections) over a jitdump (names,
	// lines) over a perf map (names). Lower ranks first.
	rank() int
	// exact reports whether the kind's code ranges are exact, so that
	// one inside a file mapping of the profile is a conflict: a perf
	// map lists code inside files too (V8's builtins in node's text).
	exact() bool
}

// A FrameSource gives the frames of the addresses of one JIT object. It
// is safe for concurrent use.
type FrameSource interface {
	// Frames returns the frames of addr, leaf first, or none.
	Frames(addr uint64) []Frame
}

// Sources returns the JIT source kinds jitpprof reads: LLVM dumps, perf
// maps and jitdump files, in the order of their Kind values.
func Sources() []Source { return []Source{llvmDumps{}, perfMaps{}, jitDumps{}} }

// sourceOfKind returns the Source of kind k.
func sourceOfKind(k Kind) Source { return Sources()[k] }

// sourceOf returns the kind of JIT source a file name is, if any.
func sourceOf(name string) (Source, bool) {
	for _, s := range Sources() {
		if s.Match(name) {
			return s, true
		}
	}
	return nil, false
}

// IsJITMapping reports whether m is a mapping the stage made for a JIT
// object: Start 0, Limit ^uint64(0), and an object's own file of one of
// the JIT source kinds.
func IsJITMapping(m *profile.Mapping) bool {
	if m == nil || m.Start != 0 || m.Limit != ^uint64(0) {
		return false
	}
	s, ok := sourceOf(filepath.Base(m.File))
	return ok && s.own(filepath.Base(m.File))
}

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

var perfMapFiles = singleFiles{"perf-", ".map"}

func (perfMaps) Kind() Kind                           { return PerfMap }
func (perfMaps) Match(name string) bool               { return perfMapFiles.Match(name) }
func (perfMaps) Group(names []string) [][]string      { return perfMapFiles.group(names) }
func (perfMaps) Load(files []string) (*Object, error) { return loadPerfMap(files[0], loadOptions{}) }
func (perfMaps) load(files []string, o loadOptions) (*Object, error) {
	return loadPerfMap(files[0], o)
}
func (perfMaps) own(name string) bool { return perfMapFiles.Match(name) }
func (perfMaps) rank() int            { return 2 }
func (perfMaps) exact() bool          { return false }

// jitDumps are jit-PID.dump files.
type jitDumps struct{}

var jitDumpFiles = singleFiles{"jit-", ".dump"}

func (jitDumps) Kind() Kind                           { return JITDump }
func (jitDumps) Match(name string) bool               { return jitDumpFiles.Match(name) }
func (jitDumps) Group(names []string) [][]string      { return jitDumpFiles.group(names) }
func (jitDumps) Load(files []string) (*Object, error) { return loadJITDump(files[0], loadOptions{}) }
func (jitDumps) load(files []string, o loadOptions) (*Object, error) {
	return loadJITDump(files[0], o)
}
func (jitDumps) own(name string) bool { return jitDumpFiles.Match(name) }
func (jitDumps) rank() int            { return 1 }
func (jitDumps) exact() bool          { return false }

// A Frame is one source-level frame of an address of a JIT object; the
// fields mean what they mean in pprof's driver.Frame.
type Frame struct {
	Func      string
	File      string
	Line      int
	Column    int
	StartLine int
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

// splitV8Name splits a V8 code name into the function, its script and
// the line the function starts on: "JS:*work /app.js:3:14" gives "work",
// "/app.js", 3. The tier mark is dropped, so that one function's code in
// several tiers adds up to one row; an anonymous function is
// "(anonymous)". A WebAssembly function's name gives the name alone,
// without its index and tier ("JS:hash_loop-0-turbofan" gives
// "hash_loop", "", 0): V8 names no module, and one function's Liftoff
// and TurboFan code add up (two functions of one name in a module do
// too). Other names are left whole (ok false).
func splitV8Name(name string) (fn, file string, line int, ok bool) {
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
// names are split (see [NameFrame]); PHP's name the function the code
// is of, or a trace starts in, so that a function's traces add up to one
// row, as V8's tiers do (PHP names no file, and the line a trace starts
// on is not the function's). Others are the function's name whole. A
// name with characters that are not printable has them escaped (see
// safename.Escape): reports print names as they are.
func NameFrame(name string) Frame {
	name = safename.Escape(name) // reports print names as they are
	if fn, file, line, ok := splitV8Name(name); ok {
		return Frame{Func: fn, File: file, Line: line, StartLine: line}
	}
	if strings.HasPrefix(name, "JIT$") || strings.HasPrefix(name, "TRACE-") {
		if m := phpName.FindStringSubmatch(name); m != nil {
			return Frame{Func: m[1] + m[2]}
		}
	}
	return Frame{Func: name}
}
