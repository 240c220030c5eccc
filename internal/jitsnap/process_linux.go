//go:build linux

package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/procfs"
	"github.com/jitpprof/pprof/internal/regfile"
)

// Snapshot copies every JIT object that process pid registered with the
// GDB JIT interface into dir (created if missing), as NAME.elf and
// NAME.meta. It reads the process without stopping it: the ELF files it
// has mapped, to find __jit_debug_descriptor; then its memory, with
// process_vm_readv(2) or /proc/PID/mem. An object whose files exist in
// dir with the same contents is left alone, so repeated snapshots add
// only new objects.
//
// Errors are *Error values whose Kind tells the cases apart: ErrNoProcess,
// ErrPermission, ErrUnsupported (a 32-bit process), ErrNoInterface (no
// loaded file defines the descriptor), ErrNoObjects (its list is empty),
// ErrCorrupt, ErrUnstable, ErrTooLarge and ErrWrite. A symfile that is
// not a valid object is not an error: it is listed in Result.Skipped.
func (o Options) Snapshot(pid int, dir string) (*Result, error) {
	p, err := openProcess(pid)
	if err != nil {
		return nil, err
	}
	defer p.mem.close()
	descs, err := p.findDescriptors()
	if err != nil {
		return nil, err
	}
	res := &Result{PID: pid, Dir: dir, Descriptors: descs}
	var objs []Object
	for _, d := range descs {
		got, skipped, err := o.Collect(p.mem, p.maps, d)
		if err == nil && slices.ContainsFunc(skipped, func(e *ObjectError) bool { return errors.Is(e, errNotMapped) }) {
			// The JIT may have mapped new memory since p.maps was read.
			if err = p.readMaps(); err == nil {
				got, skipped, err = o.Collect(p.mem, p.maps, d)
			}
		}
		if err != nil {
			return nil, p.complete(err)
		}
		objs = append(objs, got...)
		res.Skipped = append(res.Skipped, skipped...)
	}
	if len(objs) == 0 && len(res.Skipped) == 0 {
		d := descs[0]
		return nil, &Error{PID: pid, Kind: ErrNoObjects, Addr: d.Addr,
			Msg:  fmt.Sprintf("no JIT objects registered: the list of %s at %#x (in %s) is empty", descriptorSymbol, d.Addr, d.Object),
			Hint: emptyListHint}
	}
	if err := save(res, objs); err != nil {
		return nil, err
	}
	return res, nil
}

// emptyListHint says what an empty GDB JIT list means. MCJIT registers
// every object it loads; ORC registers nothing unless the host turned on
// debugger support, and with LLVM linked statically that support needs a
// symbol the executable must export.
const emptyListHint = "either the JIT has not compiled anything yet or has freed it all (take the snapshot after it has compiled code), " +
	"or it is an ORC JIT without debugger support, which registers no objects: " +
	"enable it (LLVM 17+: llvm::orc::enableDebuggerSupport(*LLJIT); LLVM 15/16: a DebugObjectManagerPlugin with createJITLoaderGDBRegistrar on the ObjectLinkingLayer) " +
	"and, where LLVM is linked statically, export llvm_orc_registerJITLoaderGDBWrapper from the executable (link with -rdynamic); " +
	"or dump the objects with jitlistener/pprof_jit_listener.h"

// process is a target opened for reading.
type process struct {
	pid   int
	exe   string // path of the executable, for messages
	order binary.ByteOrder
	maps  []Mapping
	mem   *processMemory
}

// complete adds the pid, and the advice for a permission error, to an
// *Error from a reader that did not know them.
func (p *process) complete(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.PID = p.pid
		if e.Kind == ErrPermission && e.Hint == "" {
			e.Hint = permissionHint(p.pid)
		}
	}
	return err
}

// openProcess reads the memory map and executable header of process pid.
func openProcess(pid int) (*process, error) {
	if pid <= 0 {
		return nil, &Error{PID: pid, Kind: ErrNoProcess, Msg: "not a process id"}
	}
	p := &process{pid: pid, mem: &processMemory{pid: pid}}
	fail := func(what string, err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		e := classifyReadError(what, 0, err)
		if e.Kind == ErrNoProcess {
			e.Hint = "check the pid; the process may have exited"
		}
		return p.complete(e)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, fail(fmt.Sprintf("no such process (nothing at /proc/%d)", pid), err)
	}
	if err := p.readMaps(); err != nil {
		return nil, err
	}
	exePath := fmt.Sprintf("/proc/%d/exe", pid)
	p.exe, _ = os.Readlink(exePath)
	f, err := regfile.Open(exePath)
	if err != nil {
		return nil, fail("opening "+exePath, err)
	}
	defer f.Close()
	var ident [elf.EI_NIDENT]byte
	if _, err := f.ReadAt(ident[:], 0); err != nil || !bytes.HasPrefix(ident[:], []byte(elf.ELFMAG)) {
		return nil, &Error{PID: pid, Kind: ErrUnsupported, Msg: fmt.Sprintf("the executable %s is not an ELF file", p.exe), Err: err}
	}
	if c := elf.Class(ident[elf.EI_CLASS]); c != elf.ELFCLASS64 {
		return nil, &Error{PID: pid, Kind: ErrUnsupported,
			Msg:  fmt.Sprintf("%s is a 32-bit program (%v)", p.exe, c),
			Hint: "jitsnap reads only 64-bit processes, whose jit_code_entry holds 64-bit pointers"}
	}
	var ok bool
	if p.order, ok = byteOrder(elf.Data(ident[elf.EI_DATA])); !ok {
		return nil, &Error{PID: pid, Kind: ErrUnsupported, Msg: fmt.Sprintf("%s has unknown data encoding %d", p.exe, ident[elf.EI_DATA])}
	}
	return p, nil
}

// readMaps reads /proc/PID/maps into p.maps.
func (p *process) readMaps() error {
	mapsPath := fmt.Sprintf("/proc/%d/maps", p.pid)
	text, err := os.ReadFile(mapsPath)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return p.complete(classifyReadError("reading "+mapsPath, 0, err))
	}
	maps, err := procfs.ParseMaps(bytes.NewReader(text))
	if err != nil {
		return &Error{PID: p.pid, Kind: ErrCorrupt, Msg: "parsing " + mapsPath, Err: err}
	}
	if len(maps) == 0 {
		return &Error{PID: p.pid, Kind: ErrNoProcess, Msg: mapsPath + " is empty",
			Hint: "the process is a zombie or a kernel thread"}
	}
	p.maps = maps
	return nil
}

// findDescriptors looks up __jit_debug_descriptor in every ELF file the
// process has mapped and computes its run-time address.
func (p *process) findDescriptors() ([]Descriptor, error) {
	type fileKey struct {
		dev   string
		inode uint64
	}
	byFile := map[fileKey][]Mapping{}
	var keys []fileKey
	for _, m := range p.maps {
		if !m.File() {
			continue
		}
		k := fileKey{m.Dev, m.Inode}
		if byFile[k] == nil {
			keys = append(keys, k)
		}
		byFile[k] = append(byFile[k], m)
	}
	var descs []Descriptor
	var problems []string
	pageSize := uint64(os.Getpagesize())
	for _, k := range keys {
		maps := byFile[k]
		x, err := p.examine(maps[0])
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if x == nil {
			continue
		}
		desc, ok := x.syms[descriptorSymbol]
		if !ok {
			continue
		}
		if desc.Size != 0 && desc.Size < descriptorSize {
			problems = append(problems, fmt.Sprintf("%s: %s is %d bytes, too small", x.path, descriptorSymbol, desc.Size))
			continue
		}
		biases, err := loadBiases(x.segs, maps, pageSize)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s defines %s, but %v", x.path, descriptorSymbol, err))
			continue
		}
		for _, b := range biases {
			d := Descriptor{Addr: desc.Value + b, Object: x.path, Order: p.order}
			if rc, ok := x.syms[registerCodeSymbol]; ok {
				d.RegisterCode = rc.Value + b
			}
			descs = append(descs, d)
		}
	}
	if len(descs) > 0 {
		return descs, nil
	}
	e := &Error{PID: p.pid, Kind: ErrNoInterface,
		Msg: fmt.Sprintf("no GDB JIT interface: none of the %d ELF files mapped by the process (executable %s) defines %s in .symtab or .dynsym",
			len(keys), p.exe, descriptorSymbol),
		Hint: "the process does not use LLVM's GDB registration (GDBRegistrationListener), or it is statically linked and stripped"}
	if len(problems) > 0 {
		e.Hint += fmt.Sprintf("; %d files could not be examined: %s", len(problems), strings.Join(problems, "; "))
	}
	return nil, e
}

// examined is what findDescriptors needs from one mapped ELF file.
type examined struct {
	path string            // as the process sees it
	syms map[string]symbol // the interface symbols it defines
	segs []segment         // its PT_LOAD segments
}

// examine reads the interface symbols and load segments of the file
// that mapping m maps. It returns nil for a file that is not a 64-bit
// ELF file (fonts, locale archives and other mapped data).
func (p *process) examine(m Mapping) (*examined, error) {
	f, path, err := p.openMapped(m)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ef, err := elfrel.NewFile(f, fi.Size(), path)
	var unsupported *elfrel.UnsupportedError
	if errors.Is(err, elfrel.ErrNotELF) || errors.As(err, &unsupported) {
		return nil, nil // fonts, locale archives, 32-bit code: not where the interface is
	}
	if err != nil {
		return nil, err // names the file
	}
	// elfrel refused sections that are mostly holes of a sparse file;
	// symbol names are read up to a bound besides.
	syms, err := findSymbols(ef, maxSymbolNames, descriptorSymbol, registerCodeSymbol)
	if err != nil {
		return nil, err
	}
	return &examined{path: path, syms: syms, segs: loadSegments(ef)}, nil
}

// openMapped opens the file behind mapping m, checking that it is the
// mapped file (same inode) and not one since put in its place: first
// through the process's root directory (for a process in another mount
// namespace), then by its path, then through /proc/PID/map_files (which
// also reaches a deleted file, but needs CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE), and for the executable through /proc/PID/exe.
func (p *process) openMapped(m Mapping) (*os.File, string, error) {
	path := strings.TrimSuffix(m.Path, deletedSuffix)
	names := []string{
		fmt.Sprintf("/proc/%d/root%s", p.pid, path),
		path,
		fmt.Sprintf("/proc/%d/map_files/%x-%x", p.pid, m.Start, m.Limit),
	}
	if m.Path == p.exe {
		// The executable stays reachable through /proc/PID/exe, even
		// when deleted.
		names = append(names, fmt.Sprintf("/proc/%d/exe", p.pid))
	}
	var errs []string
	for _, name := range names {
		// Never blocks: the target may have put a FIFO in the file's
		// place.
		f, err := regfile.Open(name)
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
			errs = append(errs, err.Error())
			continue
		}
		fi, err := f.Stat()
		if ino, ok := fileInode(fi); err == nil && ok && ino == m.Inode {
			return f, path, nil
		}
		f.Close()
		errs = append(errs, fmt.Sprintf("%s is not the mapped file (inode %d): replaced since it was loaded", name, m.Inode))
	}
	return nil, path, fmt.Errorf("cannot open mapped file %s: %s", m.Path, strings.Join(errs, "; "))
}
