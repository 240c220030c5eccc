package profile

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

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

func (llvmDumps) Load(files []string) (*Object, error)                { return loadLLVMDump(files) }
func (llvmDumps) load(files []string, _ loadOptions) (*Object, error) { return loadLLVMDump(files) }
func (llvmDumps) own(name string) bool                                { return filepath.Ext(name) == elfExt }
func (llvmDumps) rank() int                                           { return 0 }
func (llvmDumps) exact() bool                                         { return true }

// loadLLVMDump reads one LLVM dump's section table from its ELF file
// (files[0], unless only a .meta is there), and checks it against the
// .meta file if there is one.
func loadLLVMDump(files []string) (*Object, error) {
	var f struct{ elf, meta string }
	for _, p := range files {
		if filepath.Ext(p) == elfExt {
			f.elf = p
		} else {
			f.meta = p
		}
	}
	if f.elf == "" {
		return nil, &ObjectError{File: f.meta, Err: fmt.Errorf("no %s beside it; its sections stay unsymbolized",
			filepath.Base(strings.TrimSuffix(f.meta, metaExt)+elfExt))}
	}
	obj := &Object{Kind: LLVMDump, Path: f.elf, Meta: f.meta, data: &llvmDumpData{path: f.elf}}
	all, err := readELFSections(f.elf)
	if err != nil {
		return nil, &ObjectError{File: f.elf, Err: err}
	}
	if f.meta != "" {
		if err := checkMeta(f.meta, all); err != nil {
			return nil, err
		}
	}
	for _, s := range all {
		if !s.exec || s.Start == 0 || s.Size == 0 {
			continue
		}
		// Code the JIT ran has bytes, at user-space addresses: a section
		// claiming otherwise would take over other objects' addresses.
		if s.nobits {
			return nil, &ObjectError{File: f.elf, Err: fmt.Errorf("executable section %q is SHT_NOBITS: it holds no code", s.Name)}
		}
		if s.Limit() > maxUserAddr {
			return nil, &ObjectError{File: f.elf, Err: fmt.Errorf("executable section %q at [%#x, %#x) lies outside the user address space", s.Name, s.Start, s.Limit())}
		}
		obj.Sections = append(obj.Sections, s.Section)
	}
	if len(obj.Sections) == 0 {
		return nil, &ObjectError{File: f.elf, Err: errors.New("no loaded executable section with code " +
			"(every SHF_EXECINSTR section has address 0 or size 0): not a JIT debug object?")}
	}
	slices.SortFunc(obj.Sections, func(a, b Section) int { return cmpSection(a, b) })
	return obj, nil
}

// elfSection is a section of the ELF file with its executable flag.
type elfSection struct {
	Section
	exec   bool
	nobits bool // SHT_NOBITS: no bytes in the file
}

// readELFSections returns the sections of a relocatable ELF file with
// their load addresses (sh_addr); exec marks allocated code sections. It
// reads only the ELF header and the section header table, both validated
// against the file size.
func readELFSections(path string) ([]elfSection, error) {
	f, fd, err := openELF(path)
	if err == nil {
		defer fd.Close()
		err = f.RequireRel()
	}
	if unsupported := (*elfrel.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return nil, notJITObjectError{unsupported}
	}
	if err != nil {
		return nil, err
	}
	out := make([]elfSection, 0, len(f.Sections))
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NULL {
			continue
		}
		// elfrel has checked that no section's range wraps around.
		out = append(out, elfSection{
			Section: Section{Name: s.Name, Start: s.Addr, Size: s.Size},
			exec:    s.Executable(),
			nobits:  s.Type == elf.SHT_NOBITS,
		})
	}
	return out, nil
}

// checkMeta parses the .meta file and checks that it agrees with the
// ELF's section headers: every loaded section it lists is an allocated
// section of the ELF at the same address and with the same size, and
// every loaded executable section of the ELF is listed.
func checkMeta(path string, elfSecs []elfSection) error {
	fail := func(err error) error { return &ObjectError{File: path, Err: err} }
	f, err := regfile.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	type key struct {
		name        string
		start, size uint64
	}
	inELF := map[key]int{}
	for _, s := range elfSecs {
		if s.Start != 0 {
			inELF[key{s.Name, s.Start, s.Size}]++
		}
	}
	// Each entry is checked as it is decoded, and only counted: a .meta
	// file of millions of entries costs no more memory than a small one.
	// Nor much time: it lists the ELF's sections, each once, so a list
	// far longer than the ELF's section table is refused at that length
	// (decoding millions of entries takes seconds).
	inMeta := map[key]int{}
	entries, maxEntries := 0, max(2*len(elfSecs), 64)
	err = scanMeta(f, func() { clear(inMeta); entries = 0 }, func(s Section) error {
		if entries++; entries > maxEntries {
			return fmt.Errorf("lists more than %d sections; %s has %d", maxEntries,
				filepath.Base(strings.TrimSuffix(path, metaExt)+elfExt), len(elfSecs))
		}
		if s.Start == 0 {
			return nil
		}
		k := key{s.Name, s.Start, s.Size}
		if inELF[k] == 0 {
			return fmt.Errorf("section %s at %#x size %#x disagrees with %s: %s",
				safename.String(s.Name), s.Start, s.Size, filepath.Base(strings.TrimSuffix(path, metaExt)+elfExt), describeELFSection(elfSecs, s.Name))
		}
		inMeta[k]++
		return nil
	})
	if err != nil {
		return fail(err)
	}
	for _, s := range elfSecs {
		if s.exec && s.Start != 0 && s.Size != 0 && inMeta[key{s.Name, s.Start, s.Size}] == 0 {
			return fail(fmt.Errorf("does not list executable section %s at %#x size %#x of %s",
				safename.String(s.Name), s.Start, s.Size, filepath.Base(strings.TrimSuffix(path, metaExt)+elfExt)))
		}
	}
	return nil
}

// describeELFSection says where the ELF has sections named name.
func describeELFSection(secs []elfSection, name string) string {
	var where []string
	for _, s := range secs {
		if s.Name == name {
			where = append(where, fmt.Sprintf("at %#x size %#x", s.Start, s.Size))
		}
	}
	if len(where) == 0 {
		return "the ELF has no section of that name"
	}
	return "the ELF has it " + strings.Join(where, ", ")
}

// llvmDumpData is what an LLVM dump keeps: nothing open until its frames
// or call frame information are asked for. Its frames are those of its
// DWARF, indexed by the Cache's Indexer (the object tool's, shared with
// its code views) or, without one, by package jitsym here.
type llvmDumpData struct {
	path  string
	index Indexer // set by the Cache; nil: jitsym

	own *jitsym.Symbolizer // the index made here, if any

	cfiOnce sync.Once
	cfi     *CallFrameInfo
	cfiErr  error
}

// noDWARF is what an LLVM dump without DWARF gives up.
const noDWARF = "no DWARF debug information; JIT frames get function names from its symbol table, without file:line"

func (d *llvmDumpData) frames() (FrameSource, error) {
	if d.index != nil {
		src, hasDWARF, err := d.index.IndexFrames(d.path)
		if err != nil {
			return nil, err
		}
		if !hasDWARF {
			return src, &ObjectWarning{File: d.path, Msg: noDWARF}
		}
		return src, nil
	}
	s, err := jitsym.Open(d.path)
	if err != nil {
		return nil, err
	}
	d.own = s
	warnings := s.Warnings()
	if !s.HasDWARF() {
		warnings = append(warnings, noDWARF)
	}
	if len(warnings) > 0 {
		return dwarfFrames{s}, &ObjectWarning{File: d.path, Msg: strings.Join(warnings, "; ")}
	}
	return dwarfFrames{s}, nil
}

// dwarfFrames gives an LLVM dump's frames from its DWARF.
type dwarfFrames struct{ s *jitsym.Symbolizer }

func (d dwarfFrames) Frames(addr uint64) []Frame {
	var buf [8]jitsym.Frame
	fs := d.s.AppendFrames(buf[:0], addr)
	if len(fs) == 0 {
		return nil
	}
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = Frame(f)
	}
	return out
}

// callFrameInfo returns the object's .eh_frame and .debug_frame,
// relocated to load addresses, read once: one table covers all its code.
func (d *llvmDumpData) callFrameInfo(uint64) (*CallFrameInfo, error) {
	d.cfiOnce.Do(func() { d.cfi, d.cfiErr = d.readCallFrameInfo() })
	return d.cfi, d.cfiErr
}

func (d *llvmDumpData) readCallFrameInfo() (*CallFrameInfo, error) {
	f, fd, err := openELF(d.path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	if f.Class != elf.ELFCLASS64 {
		return nil, nil // unwound by frame pointers
	}
	info := &CallFrameInfo{Path: d.path, Relocated: true, Machine: f.Machine, ByteOrder: f.ByteOrder}
	if i := f.Section(".eh_frame"); i >= 0 && f.Sections[i].Type != elf.SHT_NOBITS {
		// Relocated as if at address 0, which the PC-relative fields
		// then make no difference to.
		l, err := f.EHFrameLoader()
		if err != nil {
			return nil, err
		}
		if info.EHFrame, err = l.Section(".eh_frame"); err != nil {
			return nil, err
		}
	}
	if f.Section(".debug_frame") >= 0 || f.Section(".zdebug_frame") >= 0 {
		l, err := f.FrameLoader()
		if err != nil {
			return nil, err
		}
		if info.DebugFrame, err = l.Section(".debug_frame"); err != nil {
			return nil, err
		}
	}
	if len(info.EHFrame) == 0 && len(info.DebugFrame) == 0 {
		return nil, nil
	}
	return info, nil
}

func (d *llvmDumpData) code() codeData     { return nil } // the object tool reads the ELF file
func (d *llvmDumpData) timeline() timeline { return nil }

func (d *llvmDumpData) close() error {
	if d.own != nil {
		return d.own.Close()
	}
	return nil
}
