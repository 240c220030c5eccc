package objtool

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"sync"

	gdriver "github.com/google/pprof/driver"
	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/regfile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// A jitdump file is an object file too: its CODE_LOAD records carry each
// function's name, address and machine code, and its CODE_DEBUG_INFO
// records the lines. The JIT stage attaches a jitdump's addresses to a
// [0, ^0) mapping of it, so pprof's code views (-disasm, -list, -weblist,
// the web UI) ask the object tool about it.

// isJITDump reports whether magic starts a jitdump file.
func isJITDump(magic []byte) bool {
	return binary.LittleEndian.Uint32(magic) == jitdump.Magic || binary.BigEndian.Uint32(magic) == jitdump.Magic
}

// dumpFile is one jitdump file, read once.
type dumpFile struct {
	path string
	f    *os.File
	d    *jitdump.Dump
	err  error

	mu    sync.Mutex
	lines map[*jitdump.Code][]jitdump.Line
}

// loadDump returns the jitdump at path, reading it on first use.
func (t *Tool) loadDump(path string) *dumpFile {
	d, _ := t.dumps.Get(path, func() *dumpFile {
		df := &dumpFile{path: path, lines: map[*jitdump.Code][]jitdump.Line{}}
		f, err := regfile.Open(path)
		if err != nil {
			df.err = fmt.Errorf("%s: %v", path, err)
			return df
		}
		st, err := f.Stat()
		if err == nil {
			df.d, err = jitdump.Read(f, st.Size(), path)
		}
		if err != nil {
			f.Close()
			df.err = err
			return df
		}
		df.f = f
		return df
	})
	return d
}

// linesOf returns c's line table, reading it on first use.
func (df *dumpFile) linesOf(c *jitdump.Code) []jitdump.Line {
	df.mu.Lock()
	defer df.mu.Unlock()
	lines, ok := df.lines[c]
	if !ok {
		lines, _ = df.d.Lines(df.f, c)
		df.lines[c] = lines
	}
	return lines
}

// frame is the frame of addr in c, as the JIT stage gives it.
func (df *dumpFile) frame(c *jitdump.Code, addr uint64) gdriver.Frame {
	f := jprofile.JITDumpFrame(c, df.linesOf(c), addr)
	return gdriver.Frame{Func: f.Func, File: f.File, Line: f.Line, Column: f.Column, StartLine: f.StartLine}
}

// symbolName is the name a piece of code is listed under: the function
// the JIT stage names it by.
func symbolName(c *jitdump.Code) string {
	return jprofile.NameFrame(c.Name).Func
}

// dumpObj is a jitdump opened for a mapping: its addresses are the
// run-time ones (the JIT stage maps it at [0, ^0)), less the mapping's
// start otherwise, as for a relocatable object.
type dumpObj struct {
	t    *Tool
	df   *dumpFile
	base uint64
}

func (o *dumpObj) Name() string    { return o.df.path }
func (o *dumpObj) BuildID() string { return "" }
func (o *dumpObj) Close() error    { return nil }

func (o *dumpObj) ObjAddr(addr uint64) (uint64, error) { return addr - o.base, nil }

func (o *dumpObj) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	x := addr - o.base
	c := o.df.d.Lookup(x)
	if c == nil {
		return []gdriver.Frame{{}}, nil
	}
	return o.t.safeFrames([]gdriver.Frame{o.df.frame(c, x)}), nil
}

func (o *dumpObj) Symbols(r *regexp.Regexp, addr uint64) ([]*gdriver.Sym, error) {
	var out []*gdriver.Sym
	for i := range o.df.d.Code {
		c := &o.df.d.Code[i]
		names := []string{symbolName(c)}
		if match := matchSymbol(names, c.Addr, c.Addr+c.Size-1, r, addr); match != nil {
			// End one past the last byte, as the ELF symbols (see findSymbols).
			out = append(out, &gdriver.Sym{Name: match, File: o.df.path, Start: c.Addr, End: c.Addr + c.Size})
		}
	}
	return out, nil
}

// openDump opens a jitdump for a mapping.
func (t *Tool) openDump(name string, start, limit, offset uint64) (gdriver.ObjFile, error) {
	df := t.loadDump(name)
	if df.err != nil {
		return nil, df.err
	}
	base := start
	if start == 0 && offset == 0 && (limit == ^uint64(0) || limit == 0) {
		base = 0
	}
	return &dumpObj{t: t, df: df, base: base}, nil
}

// disasmDump decodes the code of a jitdump in [start, end], from the code
// bytes of its CODE_LOAD records.
func (t *Tool) disasmDump(df *dumpFile, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	d := df.d
	if end > start {
		if c := d.Lookup(end - 1); c != nil && c.Addr+c.Size == end {
			end-- // a Sym.End: one past the code's last byte
		}
	}
	m := elfMachine(d.Machine)
	name := func(addr uint64) (string, uint64, bool) {
		c := d.Lookup(addr)
		if c == nil {
			return "", 0, false
		}
		return symbolName(c), c.Addr, true
	}
	var out []gdriver.Inst
	var size uint64
	for i := range d.Code {
		c := &d.Code[i]
		if c.Addr > end || c.Addr+c.Size-1 < start {
			continue
		}
		lo, hi := max(start, c.Addr), min(end, c.Addr+c.Size-1)
		if size += hi - lo + 1; size > maxDisasmBytes {
			return nil, fmt.Errorf("%s: more than %d bytes of code in [%#x, %#x]", df.path, maxDisasmBytes, start, end)
		}
		code := make([]byte, hi-lo+1)
		if _, err := df.f.ReadAt(code, c.CodeOffset+int64(lo-c.Addr)); err != nil {
			return nil, fmt.Errorf("%s: reading the code of %s: %v", df.path, c.Name, err)
		}
		insts, err := disasm.Decode(m, d.ByteOrder, code, lo, intelSyntax, name)
		if err != nil {
			return nil, decodeErr(df.path, err)
		}
		for _, in := range insts {
			f := df.frame(c, in.Addr)
			out = append(out, gdriver.Inst{Addr: in.Addr, Text: in.Text, Function: demangle.Filter(f.Func), File: f.File, Line: f.Line})
		}
	}
	if out == nil {
		return nil, fmt.Errorf("%s: no code in [%#x, %#x]", df.path, start, end)
	}
	return out, nil
}

// elfMachine is the ELF machine of a jitdump header's elf_mach.
func elfMachine(m uint32) elf.Machine { return elf.Machine(m) }
