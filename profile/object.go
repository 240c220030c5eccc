package profile

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// An Object is one JIT object, read from one of the JIT source kinds:
// NAME.elf (the relocatable object with load addresses in its section
// headers) with optionally NAME.meta, a perf map, or a jitdump file.
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

	perfMap *perfmap.Map  // a perf map's entries
	dump    *jitdump.Dump // a jitdump's final state
}

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

// objectFiles is one JIT object's files in a directory, as its source
// kind groups them, the object's own file first.
type objectFiles struct {
	src   Source
	files []string
}

// size returns the bytes of the object's files, what loading it may read.
func (f objectFiles) size() int64 {
	var n int64
	for _, p := range f.files {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			n += st.Size()
		}
	}
	return n
}

// loadBudget bounds the bytes of the JIT files being read at once: a
// directory of a few large .meta files, perf maps or jitdumps is read a
// file at a time rather than all at once.
const loadBudget = 256 << 20

// A byteBudget is a counting semaphore of bytes.
type byteBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int64
	max  int64
}

func newByteBudget(max int64) *byteBudget {
	b := &byteBudget{free: max, max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n bytes (at most the whole budget, for a file larger
// than it, which then is read alone) are free, takes them and returns how
// many it took, for release.
func (b *byteBudget) acquire(n int64) int64 {
	n = min(max(n, 0), b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	return n
}

// release gives back n bytes taken by acquire.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// scanDir returns the JIT objects of dir, each kind's grouped by it,
// sorted by their first file.
func scanDir(dir string) ([]objectFiles, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	var out []objectFiles
	for _, src := range Sources() {
		for _, group := range src.Group(names) {
			files := make([]string, len(group))
			for k, name := range group {
				files[k] = filepath.Join(dir, name)
			}
			out = append(out, objectFiles{src: src, files: files})
		}
	}
	slices.SortFunc(out, func(a, b objectFiles) int { return strings.Compare(a.files[0], b.files[0]) })
	return out, nil
}

// ObjectFiles returns the JIT objects of dir, as Load reads them: for
// each object, its files (an LLVM dump's NAME.elf and NAME.meta, a
// perf-PID.map, a jit-PID.dump). It reads only the directory listing.
func ObjectFiles(dir string) ([][]string, error) {
	fs, err := scanDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(fs))
	for i, f := range fs {
		out[i] = f.files
	}
	return out, nil
}

// HasObjects reports whether dir holds any JIT object file (NAME.elf,
// NAME.meta, perf-*.map or jit-*.dump). It reads only the directory
// listing.
func HasObjects(dir string) bool {
	files, err := scanDir(dir)
	return err == nil && len(files) > 0
}

// Load reads the JIT objects of the given directories into an
// ObjectSet. Objects are read concurrently. A directory that cannot be
// read or holds no object, and an object that is broken (a .meta without
// its .elf, an ELF that is truncated or not relocatable, a .meta that
// does not parse or contradicts its ELF), yields an *ObjectError in the
// returned list and is left out; everything else is loaded. Overlapping
// sections are reported the same way and resolved as documented on
// ObjectSet.
func Load(dirs []string) (*ObjectSet, []error) {
	var errs []error
	var files []objectFiles
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			errs = append(errs, &ObjectError{File: dir, Err: err})
			continue
		}
		fs, err := scanDir(abs)
		switch {
		case err != nil:
			errs = append(errs, &ObjectError{File: dir, Err: fmt.Errorf("reading JIT object directory: %w", unwrapPathError(err))})
		case len(fs) == 0:
			errs = append(errs, &ObjectError{File: dir, Err: errors.New("no JIT objects (NAME.elf, NAME.meta, perf-*.map, jit-*.dump) in this directory")})
		}
		files = append(files, fs...)
	}

	objs := make([]*Object, len(files))
	objErrs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	budget := newByteBudget(loadBudget)
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		n := budget.acquire(f.size())
		go func() {
			defer func() { budget.release(n); <-sem; wg.Done() }()
			objs[i], objErrs[i] = loadObject(f)
		}()
	}
	wg.Wait()

	var loaded []*Object
	for i := range files {
		if objErrs[i] != nil {
			errs = append(errs, objErrs[i])
			continue
		}
		for _, w := range objs[i].Warnings {
			errs = append(errs, &ObjectWarning{File: objs[i].Path, Msg: w})
		}
		loaded = append(loaded, objs[i])
	}
	set, overlaps := NewObjectSet(loaded)
	set.Dirs = dirs
	return set, append(errs, overlaps...)
}

// loadObject reads one object with its source kind.
func loadObject(f objectFiles) (*Object, error) {
	obj, err := f.src.Load(f.files)
	if err != nil {
		return nil, err
	}
	obj.Kind = f.src.Kind()
	return obj, nil
}

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
	obj := &Object{Path: f.elf, Meta: f.meta}
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
	// file of millions of entries costs no more than a small one.
	inMeta := map[key]int{}
	err = scanMeta(f, func() { clear(inMeta) }, func(s Section) error {
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
