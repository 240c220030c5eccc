package profile

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/safename"
)

// loadJITDump reads a jitdump file's final state into an Object: the
// file as it is when opened.
func loadJITDump(path string, o loadOptions) (*Object, error) {
	f, size, err := openSource(path, o)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	defer f.Close()
	d, err := jitdump.Read(f, size, path)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	data := &jitDumpData{path: path, d: d, codes: map[*jitdump.Code]*dumpCode{}, cfi: map[cfiKey]*CallFrameInfo{}}
	obj := &Object{Kind: JITDump, Path: path, data: data, Warnings: d.Warnings}
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

// jitDumpData is what a jitdump keeps: its final state and timeline, read
// once; the file, opened again for the line tables, call frame
// information and code bytes the run asks for, each read once.
type jitDumpData struct {
	path string
	d    *jitdump.Dump
	file lazyFile

	mu       sync.Mutex
	codes    map[*jitdump.Code]*dumpCode // what was read of each code
	cfi      map[cfiKey]*CallFrameInfo
	codeList []Code // list's answer, made once
}

// dumpCode is what was read of one piece of code: the frame its name
// gives and its line table.
type dumpCode struct {
	frame Frame
	lines []jitdump.Line
}

// cfiKey tells the tables of a jitdump apart: the .eh_frame of one piece
// of code (V8), or of all the code of one object, where the writer said
// where it was (LLVM's ORC).
type cfiKey struct{ code, ehAddr uint64 }

// codeOf returns what was read of c, reading it on first use (a line
// table that cannot be read leaves the name).
func (d *jitDumpData) codeOf(c *jitdump.Code) *dumpCode {
	d.mu.Lock()
	defer d.mu.Unlock()
	dc := d.codes[c]
	if dc == nil {
		dc = &dumpCode{frame: NameFrame(c.Name)}
		if f, err := d.file.open(d.path); err == nil {
			dc.lines, _ = d.d.Lines(f, c)
		}
		d.codes[c] = dc
	}
	return dc
}

func (d *jitDumpData) frames() (FrameSource, error) {
	if _, err := d.file.open(d.path); err != nil {
		return nil, &ObjectError{File: d.path, Err: err}
	}
	return d, nil
}

// Frames returns the frame of addr in the code of the final state that
// holds it: one, or none.
func (d *jitDumpData) Frames(addr uint64) []Frame {
	c := d.d.Lookup(addr)
	if c == nil {
		return nil
	}
	dc := d.codeOf(c)
	return []Frame{frameAt(dc.frame, dc.lines, addr)}
}

// frameAt is the frame of addr in code whose name gives f and whose line
// table is lines: the function (V8's names split into function, script
// and line, see splitV8Name; PHP's named by their function) and the line
// of the entry covering addr. The JIT stage, the replay and the object
// tool's code views all name jitdump code so.
func frameAt(f Frame, lines []jitdump.Line, addr uint64) Frame {
	start := f.StartLine
	if l, ok := jitdump.LineAt(lines, addr); ok {
		// Node 20 writes some line entries whose file name is not the
		// script's (a few characters of something else): V8 code keeps
		// the script from its name, with the entry's line.
		if f.File == "" {
			f.File = safename.Escape(l.File)
		}
		f.Line, f.StartLine = l.Line, start
		if start == 0 {
			f.StartLine = lines[0].Line
		}
	}
	return f
}

func (d *jitDumpData) callFrameInfo(pc uint64) (*CallFrameInfo, error) {
	c := d.d.Lookup(pc)
	if c == nil || !c.HasEHFrame() {
		return nil, nil
	}
	k := cfiKey{c.Addr, c.EHFrameAddr()}
	if k.ehAddr != 0 {
		k.code = 0 // one table for all the code it covers
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if info, ok := d.cfi[k]; ok {
		return info, nil
	}
	f, err := d.file.open(d.path)
	if err != nil {
		return nil, &ObjectError{File: d.path, Err: err}
	}
	b, err := d.d.EHFrame(f, c)
	if err != nil {
		return nil, &ObjectError{File: d.path, Err: err}
	}
	var info *CallFrameInfo
	if b != nil {
		info = &CallFrameInfo{Path: d.path, EHFrame: b, EHFrameAddr: c.EHFrameAddr(), Code: c.Addr,
			Machine: elf.Machine(d.d.Machine), ByteOrder: d.d.ByteOrder}
	}
	d.cfi[k] = info
	return info, nil
}

func (d *jitDumpData) code() codeData     { return d }
func (d *jitDumpData) timeline() timeline { return d }
func (d *jitDumpData) close() error       { return d.file.close() }

// list returns the code of the final state.
func (d *jitDumpData) list() []Code {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.codeList == nil {
		d.codeList = make([]Code, len(d.d.Code))
		for i, c := range d.d.Code {
			d.codeList[i] = Code{Name: safename.Escape(c.Name), Addr: c.Addr, Size: c.Size}
		}
	}
	return d.codeList
}

func (d *jitDumpData) read(p []byte, addr uint64) error {
	c := d.d.Lookup(addr)
	if c == nil || uint64(len(p)) > c.Addr+c.Size-addr {
		return fmt.Errorf("%s: no code at [%#x, %#x)", safename.String(d.path), addr, addr+uint64(len(p)))
	}
	f, err := d.file.open(d.path)
	if err != nil {
		return &ObjectError{File: d.path, Err: err}
	}
	if _, err := f.ReadAt(p, c.CodeOffset+int64(addr-c.Addr)); err != nil {
		return fmt.Errorf("%s: reading the code of %s: %w", safename.String(d.path), safename.String(c.Name), err)
	}
	return nil
}

func (d *jitDumpData) machine() (elf.Machine, binary.ByteOrder) {
	return elf.Machine(d.d.Machine), d.d.ByteOrder
}

// A timeline is what a JIT source knows of its code over time (a
// jitdump's loads and moves).
type timeline interface {
	// pid is the process whose code it is.
	pid() uint32
	// replaced reports whether code was moved, or loaded over other code.
	replaced() bool
	// codeAt returns the frame of the code that held addr at time t, if
	// that is not the code there at the end, and the code, to tell it
	// apart from other code at addr.
	codeAt(addr, t uint64) (f Frame, code any, ok bool)
}

func (d *jitDumpData) pid() uint32    { return d.d.PID }
func (d *jitDumpData) replaced() bool { return d.d.Replaced() }

func (d *jitDumpData) codeAt(addr, t uint64) (Frame, any, bool) {
	c, final := d.d.At(addr, t)
	if c == nil || d.d.Final(c, addr) {
		return Frame{}, nil, false
	}
	dc := d.codeOf(c)
	return frameAt(dc.frame, dc.lines, final), c, true
}
