package objtool

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"

	gdriver "github.com/google/pprof/driver"
	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/jitsym"
	jprofile "github.com/jitpprof/pprof/profile"
)

// A JIT object that holds its code bytes (a jitdump: its CODE_LOAD
// records carry each function's name, address and machine code, its
// CODE_DEBUG_INFO records the lines) is an object file too. The JIT
// stage attaches its addresses to a [0, ^0) mapping of it, so pprof's
// code views (-disasm, -list, -weblist, the web UI) ask the object tool
// about it; the tool answers from the run's JIT object cache, which the
// JIT stage and the replay of perf.data samples read it into.

// isJITDump reports whether magic starts a jitdump file.
func isJITDump(magic []byte) bool {
	return binary.LittleEndian.Uint32(magic) == jitdump.Magic || binary.BigEndian.Uint32(magic) == jitdump.Magic
}

// jitCodeObj is a JIT object with code bytes opened for a mapping: its
// addresses are the run-time ones (the JIT stage maps it at [0, ^0)),
// less the mapping's start otherwise, as for a relocatable object.
type jitCodeObj struct {
	t     *Tool
	obj   *jprofile.Object
	frame jprofile.FrameSource
	code  []jprofile.Code
	base  uint64
}

// openJITCode opens the JIT object at name for a mapping, from the run's
// cache.
func (t *Tool) openJITCode(name string, start, limit, offset uint64) (gdriver.ObjFile, error) {
	o, err := t.jitCode(name)
	if err != nil {
		return nil, err
	}
	if start == 0 && offset == 0 && (limit == ^uint64(0) || limit == 0) {
		o.base = 0
	} else {
		o.base = start
	}
	return o, nil
}

// jitCode returns the JIT object at name, read by the run's cache, with
// its frames and code.
func (t *Tool) jitCode(name string) (*jitCodeObj, error) {
	obj, err := t.jit.Object(name)
	if err != nil {
		return nil, err
	}
	code, _, _, ok := obj.Code()
	if !ok {
		return nil, fmt.Errorf("%s: a %v holds no code", name, obj.Kind)
	}
	frames, err := obj.FrameSource()
	if frames == nil {
		return nil, err
	}
	return &jitCodeObj{t: t, obj: obj, frame: frames, code: code}, nil
}

func (o *jitCodeObj) Name() string    { return o.obj.Path }
func (o *jitCodeObj) BuildID() string { return "" }
func (o *jitCodeObj) Close() error    { return nil }

func (o *jitCodeObj) ObjAddr(addr uint64) (uint64, error) { return addr - o.base, nil }

// frameAt returns the frame of addr (a run-time address), as the JIT
// stage gives it.
func (o *jitCodeObj) frameAt(addr uint64) gdriver.Frame {
	fs := o.frame.Frames(addr)
	if len(fs) == 0 {
		return gdriver.Frame{}
	}
	return gdriver.Frame(fs[0])
}

func (o *jitCodeObj) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	return o.t.safeFrames([]gdriver.Frame{o.frameAt(addr - o.base)}), nil
}

// lookup returns the piece of code holding addr.
func (o *jitCodeObj) lookup(addr uint64) (jprofile.Code, bool) {
	i, _ := slices.BinarySearchFunc(o.code, addr, func(c jprofile.Code, a uint64) int {
		if c.Addr <= a {
			return -1
		}
		return 1
	})
	if i == 0 || addr-o.code[i-1].Addr >= o.code[i-1].Size {
		return jprofile.Code{}, false
	}
	return o.code[i-1], true
}

// symbolName is the name a piece of code is listed under: the function
// the JIT stage names it by.
func symbolName(c jprofile.Code) string {
	return jprofile.NameFrame(c.Name).Func
}

func (o *jitCodeObj) Symbols(r *regexp.Regexp, addr uint64) ([]*gdriver.Sym, error) {
	var out []*gdriver.Sym
	for _, c := range o.code {
		names := []string{symbolName(c)}
		if match := matchSymbol(names, c.Addr, c.Addr+c.Size-1, r, addr); match != nil {
			// End one past the last byte, as the ELF symbols (see findSymbols).
			out = append(out, &gdriver.Sym{Name: match, File: o.obj.Path, Start: c.Addr, End: c.Addr + c.Size})
		}
	}
	return out, nil
}

// disasmJITCode decodes the code of a JIT object in [start, end], from
// the code bytes it holds.
func (t *Tool) disasmJITCode(o *jitCodeObj, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	if end > start {
		if c, ok := o.lookup(end - 1); ok && c.Addr+c.Size == end {
			end-- // a Sym.End: one past the code's last byte
		}
	}
	_, m, bo, _ := o.obj.Code()
	syn, err := t.textSyntax(false, intelSyntax)
	if err != nil {
		return nil, err
	}
	class := elf.ELFCLASS64 // a jitdump's code is of the process's own word size, 64-bit but for 386 and ARM
	if m == elf.EM_386 || m == elf.EM_ARM {
		class = elf.ELFCLASS32
	}
	name := func(addr uint64) (string, uint64, bool) {
		c, ok := o.lookup(addr)
		if !ok {
			return "", 0, false
		}
		return symbolName(c), c.Addr, true
	}
	var out []gdriver.Inst
	var size uint64
	for _, c := range o.code {
		if c.Addr > end || c.Addr+c.Size-1 < start {
			continue
		}
		lo, hi := max(start, c.Addr), min(end, c.Addr+c.Size-1)
		if size += hi - lo + 1; size > maxDisasmBytes {
			return nil, fmt.Errorf("%s: more than %d bytes of code in [%#x, %#x]", o.obj.Path, maxDisasmBytes, start, end)
		}
		code := make([]byte, hi-lo+1)
		if err := o.obj.ReadCode(code, lo); err != nil {
			return nil, err
		}
		insts, err := decodeText(m, class, bo, code, lo, syn, name)
		if err != nil {
			return nil, decodeErr(o.obj.Path, err)
		}
		for _, in := range insts {
			f := o.frameAt(in.Addr)
			out = append(out, gdriver.Inst{Addr: in.Addr, Text: in.Text, Function: demangle.Filter(f.Func), File: f.File, Line: f.Line})
		}
	}
	if out == nil {
		return nil, fmt.Errorf("%s: no code in [%#x, %#x]", o.obj.Path, start, end)
	}
	return out, nil
}

// IndexFrames returns the frames of the ELF file at path from the tool's
// index of it (see Index), shared with the code views, and whether it
// has DWARF: the JIT object cache symbolizes LLVM dumps with it (the
// tool is its jprofile.Indexer).
func (t *Tool) IndexFrames(path string) (jprofile.FrameSource, bool, error) {
	s, err := t.Index(path)
	if err != nil {
		return nil, false, err
	}
	return indexFrames{s}, s.HasDWARF(), nil
}

var _ jprofile.Indexer = (*Tool)(nil)

// indexFrames gives the frames of an index.
type indexFrames struct{ s *jitsym.Symbolizer }

func (f indexFrames) Frames(addr uint64) []jprofile.Frame {
	// The frames are built in buf (on the stack, for all but the deepest
	// inline chains) and copied once, into the slice returned.
	var buf [8]jitsym.Frame
	frames := f.s.AppendFrames(buf[:0], addr)
	if len(frames) == 0 {
		return nil
	}
	out := make([]jprofile.Frame, len(frames))
	for i, fr := range frames {
		out[i] = jprofile.Frame(fr)
	}
	return out
}
