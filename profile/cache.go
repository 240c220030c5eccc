package profile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/oncemap"
	"github.com/jitpprof/pprof/internal/regfile"
)

// A Cache holds the JIT objects of one run. Each JIT source file is
// opened, validated and indexed once, however many profiles, directories
// and consumers use it: the mapping stage (its code ranges), the
// symbolizer ([Object.FrameSource]), the replay of perf.data samples
// ([ObjectSet.CodeAt]), the unwinder of their stacks
// ([Object.CallFrameInfo]) and pprof's code views ([Object.Code]). It is
// safe for concurrent use; Close releases the files its objects keep
// open.
type Cache struct {
	index    Indexer
	objects  oncemap.Map[string, loadedObject] // by the path of each object's own file
	sets     oncemap.Map[string, loadedSet]    // by the directories and files asked for
	reads    atomic.Int64
	warming  sync.WaitGroup
	anyOwner atomic.Bool // see SetAnyOwner
}

// SetAnyOwner has the Cache read the perf maps and jitdumps of any owner
// (any true), which by default it refuses, as perf does, unless the user
// pprof runs as or root owns them: a perf map in /tmp names the code of
// whichever process has its number, and anyone can write one there. It
// applies to the objects read afterwards.
func (c *Cache) SetAnyOwner(any bool) { c.anyOwner.Store(any) }

// CacheOptions configure a Cache.
type CacheOptions struct {
	// Index, if not nil, indexes the DWARF of LLVM dumps for their
	// frames: jitpprof's object tool, which keeps one index per file for
	// its code views too. Nil has the Cache index them itself.
	Index Indexer
}

// An Indexer gives the frames of the code of an ELF file from its DWARF
// and symbol table, indexing each file once.
type Indexer interface {
	// IndexFrames returns the frame source of the ELF file at path and
	// whether it has DWARF (without, its frames are function names from
	// its symbol table).
	IndexFrames(path string) (src FrameSource, hasDWARF bool, err error)
}

// loadedObject is what reading one object gave.
type loadedObject struct {
	obj *Object
	err error
}

// loadedSet is what Load gave for one list of directories and files.
type loadedSet struct {
	set  *ObjectSet
	errs []error
}

// NewCache returns an empty Cache.
func NewCache(o CacheOptions) *Cache { return &Cache{index: o.Index} }

// Reads returns how many JIT object files the Cache has read: each once.
func (c *Cache) Reads() int { return int(c.reads.Load()) }

// Load returns the JIT objects of the directories dirs and of the files
// files (as a perf.data recording names them: jit-PID.dump,
// perf-PID.map, NAME.elf), indexed as an ObjectSet. The same lists give
// the same ObjectSet and errors; each object is read once however many
// lists hold it. Objects are read concurrently.
//
// A directory that cannot be read or holds no object, and an object that
// is broken (a .meta without its .elf, an ELF that is truncated or not
// relocatable, a .meta that does not parse or contradicts its ELF),
// yields an *ObjectError in the returned list and is left out; what was
// left out of an object that is used an *ObjectWarning; everything else
// is loaded. Overlapping sections are reported the same way and resolved
// as documented on ObjectSet.
func (c *Cache) Load(dirs, files []string) (*ObjectSet, []error) {
	key := strings.Join(dirs, "\x00") + "\x01" + strings.Join(files, "\x00")
	ls, _ := c.sets.Get(key, func() loadedSet {
		set, errs := c.load(dirs, files)
		return loadedSet{set, errs}
	})
	return ls.set, ls.errs
}

// Load reads the JIT objects of the given directories into an ObjectSet,
// with a Cache of its own (see [Cache.Load]). The objects keep no file
// open until they are asked for frames or code.
func Load(dirs []string) (*ObjectSet, []error) {
	return NewCache(CacheOptions{}).Load(dirs, nil)
}

func (c *Cache) load(dirs, files []string) (*ObjectSet, []error) {
	var errs []error
	var groups []objectFiles
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
		groups = append(groups, fs...)
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			errs = append(errs, &ObjectError{File: f, Err: err})
			continue
		}
		g, err := fileGroup(abs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		groups = append(groups, g)
	}
	// An object in two of the directories, or named as a file too, is
	// one object.
	seen := map[string]bool{}
	groups = slices.DeleteFunc(groups, func(g objectFiles) bool {
		dup := seen[g.files[0]]
		seen[g.files[0]] = true
		return dup
	})

	objs := make([]*Object, len(groups))
	objErrs := make([]error, len(groups))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	budget := newByteBudget(loadBudget)
	for i, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		n := budget.acquire(g.size())
		go func() {
			defer func() { budget.release(n); <-sem; wg.Done() }()
			objs[i], objErrs[i] = c.object(g)
		}()
	}
	wg.Wait()

	var loaded []*Object
	for i := range groups {
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

// object reads the object of the files g, once per Cache.
func (c *Cache) object(g objectFiles) (*Object, error) {
	lo, _ := c.objects.Get(g.files[0], func() loadedObject {
		c.reads.Add(1)
		obj, err := g.src.load(g.files, loadOptions{anyOwner: c.anyOwner.Load()})
		if err != nil {
			return loadedObject{err: err}
		}
		obj.Kind, obj.src = g.src.Kind(), g.src
		if llvm, ok := obj.data.(*llvmDumpData); ok {
			llvm.index = c.index
		}
		return loadedObject{obj: obj}
	})
	return lo.obj, lo.err
}

// Object returns the JIT object whose own file is path, reading it on
// first use (the one Load read, if it did). Its kind is told by its
// name, or, for a file of another name, by its contents: a jitdump is
// named after its process by convention only, and pprof's code views
// open whatever file a mapping names.
func (c *Cache) Object(path string) (*Object, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	g, err := fileGroup(abs)
	if err != nil {
		if !isJITDumpFile(abs) {
			return nil, err
		}
		g = objectFiles{src: jitDumps{}, files: []string{abs}}
	}
	return c.object(g)
}

// isJITDumpFile reports whether the regular file at path starts with a
// jitdump's magic number, in either byte order.
func isJITDumpFile(path string) bool {
	f, err := regfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(magic[:]) == jitdump.Magic || binary.BigEndian.Uint32(magic[:]) == jitdump.Magic
}

// Warm has the frame sources of objs opened in the background (an LLVM
// dump's DWARF indexed), so that they are ready when the stage
// symbolizes them.
func (c *Cache) Warm(objs []*Object) {
	for _, o := range objs {
		c.warming.Add(1)
		go func() {
			defer c.warming.Done()
			o.FrameSource()
		}()
	}
}

// Close waits for what Warm started and closes the files of every object
// read. The Cache must not be used afterwards.
func (c *Cache) Close() error {
	c.warming.Wait()
	var errs []error
	for _, lo := range c.objects.Drain() {
		if lo.obj != nil {
			errs = append(errs, lo.obj.close())
		}
	}
	return errors.Join(errs...)
}

// fileGroup returns the object of the JIT source file path, named as its
// kind names its files (an LLVM dump's NAME.meta is taken with its
// NAME.elf when it is there).
func fileGroup(path string) (objectFiles, error) {
	dir, base := filepath.Split(path)
	src, ok := sourceOf(base)
	if !ok {
		return objectFiles{}, &ObjectError{File: path, Err: errors.New("not a JIT source file (NAME.elf, NAME.meta, perf-*.map, jit-*.dump)")}
	}
	var names []string
	if src.Kind() == LLVMDump {
		stem := strings.TrimSuffix(base, filepath.Ext(base))
		for _, ext := range []string{elfExt, metaExt} {
			if _, err := os.Stat(filepath.Join(dir, stem+ext)); err == nil || stem+ext == base {
				names = append(names, stem+ext)
			}
		}
	} else {
		names = []string{base}
	}
	groups := src.Group(names)
	if len(groups) != 1 {
		return objectFiles{}, &ObjectError{File: path, Err: errors.New("not a JIT object file")}
	}
	files := make([]string, len(groups[0]))
	for i, n := range groups[0] {
		files[i] = filepath.Join(dir, n)
	}
	return objectFiles{src: src, files: files}, nil
}

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
