package profile

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// An Object is one JIT object, read from one of the JIT source kinds:
// NAME.elf (the relocatable object with load addresses in its section
// headers) with optionally NAME.meta, a perf map, or a jitdump file.
//
// An Object is read once per run, by a [Cache], and answers for its code
// from then on: its frames ([Object.FrameSource]), its call frame
// information ([Object.CallFrameInfo]), its code bytes ([Object.Code])
// and, for a jitdump, the code each address held over time
// ([ObjectSet.CodeAt]). Its methods are safe for concurrent use.
type Object struct {
	// Kind is the kind of file the object was read from.
	Kind Kind
	// Path is the absolute path of NAME.elf, perf-PID.map or jit-PID.dump.
	Path string
	// Meta is the absolute path of NAME.meta, or "" if there is none.
	Meta string
	// Sections are the code ranges the object claims, sorted by Start:
	// the loaded, non-empty executable sections of an LLVM dump (from the
	// section headers of the ELF file, checked against the .meta file
	// when there is one); the entries of a perf map and the code of a
	// jitdump, adjacent ones merged (unnamed).
	Sections []Section
	// Warnings say what of the file was left out (malformed perf map
	// lines, jitdump records); the rest is used.
	Warnings []string

	src  Source     // its kind
	data objectData // what its kind keeps to answer for its code

	framesOnce sync.Once
	frameSrc   FrameSource
	frameErr   error
}

// objectData is what an object's kind keeps of its files after Load to
// answer for its code: one per object, shared by every consumer of the
// run (the symbolizer, the replay of perf.data samples, the unwinder and
// the object tool's code views).
type objectData interface {
	// frames returns the object's frame source; the Object opens it
	// once.
	frames() (FrameSource, error)
	// callFrameInfo returns the call frame information of the code at
	// pc, nil if the object has none for it.
	callFrameInfo(pc uint64) (*CallFrameInfo, error)
	// code returns what the object knows of its code bytes, nil if it
	// holds none.
	code() codeData
	// timeline returns the code the object loaded over time, nil if the
	// kind does not know it.
	timeline() timeline
	// close releases the files the object keeps open.
	close() error
}

// noData is the objectData of an object that holds nothing but its
// ranges (one made by hand, as tests do).
type noData struct{}

func (noData) frames() (FrameSource, error)                 { return nil, errors.New("no frames") }
func (noData) callFrameInfo(uint64) (*CallFrameInfo, error) { return nil, nil }
func (noData) code() codeData                               { return nil }
func (noData) timeline() timeline                           { return nil }
func (noData) close() error                                 { return nil }

// source returns o's kind (an object made by hand has only its Kind).
func (o *Object) source() Source {
	if o.src == nil {
		return sourceOfKind(o.Kind)
	}
	return o.src
}

// dataOf returns o's data, or noData for an object made by hand.
func (o *Object) dataOf() objectData {
	if o.data == nil {
		return noData{}
	}
	return o.data
}

// FrameSource returns the source of the frames of o's addresses, opened
// on first use and shared by every caller; the Cache that read o closes
// it. The error may come with a usable source: an *ObjectWarning says
// what the frames will lack (an LLVM dump without DWARF gives function
// names from its symbol table only).
func (o *Object) FrameSource() (FrameSource, error) {
	o.framesOnce.Do(func() { o.frameSrc, o.frameErr = o.dataOf().frames() })
	return o.frameSrc, o.frameErr
}

// A CallFrameInfo is the call frame information a JIT object has for a
// piece of its code, for unwinding stacks through it: .eh_frame and
// .debug_frame sections, as the unwinder of perf.data stacks reads them.
type CallFrameInfo struct {
	// Path is the object's file, for messages.
	Path string
	// EHFrame and DebugFrame are the bytes of the sections; either may be
	// empty.
	EHFrame, DebugFrame []byte
	// Relocated says the tables give load addresses (an LLVM dump's,
	// relocated with the sections' addresses): they cover every piece of
	// the object's code.
	Relocated bool
	// EHFrameAddr is where the .eh_frame was in memory, if the writer
	// said (LLVM's ORC: one table for all the code of an object); 0 if
	// not, and then the first entry of EHFrame covers the code at Code
	// from its start (V8: one table per piece of code).
	EHFrameAddr uint64
	// Code is the address of the code EHFrame is for, when not Relocated.
	Code uint64
	// Machine and ByteOrder are those of the code.
	Machine   elf.Machine
	ByteOrder binary.ByteOrder
}

// CallFrameInfo returns the call frame information o has for its code at
// pc, read once and shared: the same *CallFrameInfo for all the code one
// table covers. It returns nil if o has none for that code (a perf map
// has none; a jitdump only where the JIT wrote CODE_UNWINDING_INFO).
func (o *Object) CallFrameInfo(pc uint64) (*CallFrameInfo, error) {
	return o.dataOf().callFrameInfo(pc)
}

// A Code is one piece of code whose bytes a JIT object holds (a
// jitdump's code loads).
type Code struct {
	Name       string // as the JIT named it (see NameFrame for the function)
	Addr, Size uint64
}

// codeData is what an object knows of its code bytes.
type codeData interface {
	list() []Code
	read(p []byte, addr uint64) error
	machine() (elf.Machine, binary.ByteOrder)
}

// Code returns the pieces of code whose bytes o holds, sorted by address
// (a jitdump's code in its final state), and their machine and byte
// order; ok is false for kinds whose code is not in the object (perf
// maps; LLVM dumps, whose code the object tool reads from the ELF file).
func (o *Object) Code() (code []Code, m elf.Machine, bo binary.ByteOrder, ok bool) {
	c := o.dataOf().code()
	if c == nil {
		return nil, 0, nil, false
	}
	m, bo = c.machine()
	return c.list(), m, bo, true
}

// ReadCode reads the code bytes at [addr, addr+len(p)) into p; they must
// all lie in one piece of the code [Object.Code] lists.
func (o *Object) ReadCode(p []byte, addr uint64) error {
	c := o.dataOf().code()
	if c == nil {
		return fmt.Errorf("%s: a %v holds no code bytes", safename.String(o.Path), o.Kind)
	}
	return c.read(p, addr)
}

// close releases the files o keeps open. The Cache that read o calls it.
func (o *Object) close() error { return o.dataOf().close() }

// An ObjectError reports a problem with one JIT object or directory.
// The object is left out of its ObjectSet; the rest is unaffected.
type ObjectError struct {
	File string // the .elf, .meta or directory at fault
	Err  error  // what was wrong
}

// Error returns "FILE: what was wrong". A reader's typed error that
// names the same file itself (*elfrel.FormatError, *jitdump.FormatError,
// *perfmap.FormatError) gives only its Reason, so the name is not said
// twice.
func (e *ObjectError) Error() string {
	msg := e.Err.Error()
	if r, ok := e.Err.(fileReasoner); ok && r.FileName() == e.File {
		msg = r.Reason()
	}
	return safename.String(e.File) + ": " + msg
}

// A fileReasoner is a reader's error that names its file.
type fileReasoner interface {
	FileName() string // the file, as given to the reader
	Reason() string   // the message without the file name
}

// A notJITObjectError is the *elfrel.UnsupportedError of an ELF file that
// is well formed but is not an object of the kind JIT hosts dump.
type notJITObjectError struct{ err *elfrel.UnsupportedError }

func (e notJITObjectError) Error() string {
	return "not a JIT object dump we can read: " + e.err.Msg
}

// Unwrap returns the *elfrel.UnsupportedError.
func (e notJITObjectError) Unwrap() error { return e.err }

// An ObjectWarning reports a part of a JIT source file that was left
// out; the object itself is used.
type ObjectWarning struct {
	File string
	Msg  string
}

func (w *ObjectWarning) Error() string { return safename.String(w.File) + ": " + w.Msg }

// Unwrap returns the underlying error.
func (e *ObjectError) Unwrap() error { return e.Err }

// maxUserAddr bounds the addresses of JIT code: user space ends below
// 2^47 on x86-64 (2^56 with 5-level paging), 2^52 on AArch64.
const maxUserAddr = 1 << 56

// Extensions of the two files of a JIT object.
const (
	elfExt  = ".elf"
	metaExt = ".meta"
)

// unwrapPathError drops the *os.PathError wrapper, whose path the
// caller already reports.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openELF opens the ELF file at path with elfrel, if it is a regular
// file (see regfile.Open); the caller closes fd.
func openELF(path string) (f *elfrel.File, fd *os.File, err error) {
	fd, err = regfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := fd.Stat()
	if err == nil {
		f, err = elfrel.NewFile(fd, st.Size(), path)
	}
	if err != nil {
		fd.Close()
		return nil, nil, err
	}
	return f, fd, nil
}
