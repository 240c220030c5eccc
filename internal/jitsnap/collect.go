package jitsnap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// Defaults of Options.
const (
	// DefaultMaxEntries bounds the list length (a million objects).
	DefaultMaxEntries = 1 << 20
	// DefaultMaxObjectSize bounds one symfile (256 MiB; LLVM's largest
	// reported debug objects are tens of MiB).
	DefaultMaxObjectSize = 256 << 20
	// DefaultMaxTotalSize bounds all symfiles together (4 GiB).
	DefaultMaxTotalSize = 4 << 30
	// DefaultAttempts is how often the list is read before giving up.
	DefaultAttempts = 10
)

// Options bounds what a snapshot reads from a target that may be racing
// or hostile. The zero value uses the defaults.
type Options struct {
	// MaxEntries is the most list entries read; a longer list is an
	// error. 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxObjectSize is the largest symfile kept; larger ones are
	// skipped. 0 means DefaultMaxObjectSize (256 MiB).
	MaxObjectSize uint64
	// MaxTotalSize bounds the bytes of all symfiles together: what a
	// snapshot writes. (Memory does not grow with it: symfiles are
	// checked, hashed and copied from the target a chunk at a time.)
	// 0 means DefaultMaxTotalSize (4 GiB).
	MaxTotalSize uint64
	// Attempts is how many times the list is read before giving up on
	// it changing. 0 means DefaultAttempts.
	Attempts int
}

func (o Options) withDefaults() Options {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxObjectSize == 0 {
		o.MaxObjectSize = DefaultMaxObjectSize
	}
	if o.MaxTotalSize == 0 {
		o.MaxTotalSize = DefaultMaxTotalSize
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	return o
}

// An Object is one JIT object of the target: the ELF image a list entry
// points to, which the JIT built for debuggers. It is relocatable
// (ET_REL); its section headers carry the load addresses.
type Object struct {
	// Name is the stem of its files, DIR/Name.elf and DIR/Name.meta:
	// "IDENT-HASH" as the dump listener (jitlistener/) names them, IDENT
	// being the object's source file name (its first STT_FILE symbol) or
	// "jit", and HASH the 64-bit xxHash of the image in hex. The image
	// holds the load addresses, so equal names mean the same code at the
	// same place.
	Name string
	// Entry is the address of its jit_code_entry in the target.
	Entry uint64
	// Addr is the target address of the image (symfile_addr).
	Addr uint64
	// Size is the size of the image (symfile_size).
	Size uint64
	// Sections are its section headers, the null section left out.
	Sections []elfrel.Section
	// Data is the image, for an Object built by the caller. Collect
	// leaves it nil: WriteObject then copies the image from the target
	// a chunk at a time, and checks it still has the hash in Name.
	Data []byte

	mem  Memory // the target, for an object from Collect
	hash uint64 // the image's xxHash64, for an object from Collect
}

// copyChunk is how much of a symfile is read from the target at a time,
// to check, hash, compare or copy it: a snapshot's memory does not grow
// with the size of the objects.
const copyChunk = 1 << 20

// image returns a reader of obj's image and its size.
func (obj *Object) image() (io.ReaderAt, int64) {
	if obj.Data != nil || obj.mem == nil {
		return bytes.NewReader(obj.Data), int64(len(obj.Data))
	}
	return &memImage{mem: obj.mem, addr: obj.Addr, size: obj.Size}, int64(obj.Size)
}

// memImage reads a symfile in the target's memory as a file.
type memImage struct {
	mem  Memory
	addr uint64
	size uint64
}

func (m *memImage) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off) >= m.size {
		return 0, io.EOF
	}
	n := min(uint64(len(p)), m.size-uint64(off))
	if err := m.mem.ReadMemory(m.addr+uint64(off), p[:n]); err != nil {
		return 0, err
	}
	if n < uint64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// hash returns the xxHash64 of the image, read a chunk at a time.
func (m *memImage) hash() (uint64, error) {
	d := xxhash.New()
	buf := make([]byte, min(m.size, copyChunk))
	for off := uint64(0); off < m.size; {
		chunk := buf[:min(uint64(len(buf)), m.size-off)]
		if err := m.mem.ReadMemory(m.addr+off, chunk); err != nil {
			return 0, err
		}
		d.Write(chunk)
		off += uint64(len(chunk))
	}
	return d.Sum64(), nil
}

// listEntry is one jit_code_entry as read.
type listEntry struct {
	Addr, Next, Prev, Symfile, Size uint64
}

// walkError is a failed walk of the list; retry says whether reading it
// again may succeed (the list may have been changing under us).
type walkError struct {
	err   *Error
	retry bool
}

// errListChanged is the reason for a retry after two walks disagreed.
var errListChanged = errors.New("the list changed while its objects were read")

// errNotMapped is why an entry whose symfile lies in no known readable
// mapping is skipped: the caller may have read the mappings before the
// JIT allocated it, and can try again with fresh ones.
var errNotMapped = errors.New("its address is in no readable mapping")

// Collect reads the JIT objects registered with descriptor d from mem,
// whose readable mappings are maps. LLVM updates the list without any
// sequence counter a reader could check, so Collect walks the list,
// reads the objects, and walks it again, until two consecutive walks
// agree (up to o.Attempts times). Entries whose symfile is unreadable,
// too large, outside one readable region of maps, or not a valid
// relocatable ELF are returned as skipped; the objects and the skipped
// entries are in list order (newest first, as LLVM prepends). The error
// is an *Error without a PID.
func (o Options) Collect(mem Memory, maps []Mapping, d Descriptor) ([]Object, []*ObjectError, error) {
	o = o.withDefaults()
	if d.Order == nil {
		return nil, nil, &Error{Kind: ErrUnsupported, Addr: d.Addr, Msg: "descriptor without a byte order"}
	}
	c := &collector{o: o, mem: mem, maps: maps, d: d}
	first, werr := c.walk()
	var last error
	for attempt := 1; ; attempt++ {
		if werr == nil {
			objs, skipped, err := c.read(first)
			if err != nil {
				return nil, nil, err
			}
			second, serr := c.walk()
			if serr == nil && slices.Equal(first, second) {
				return objs, skipped, nil
			}
			first, werr, last = second, serr, errListChanged
		}
		if werr != nil {
			if !werr.retry {
				return nil, nil, werr.err
			}
			last = werr.err
		}
		if attempt >= o.Attempts {
			return nil, nil, &Error{Kind: ErrUnstable, Addr: d.Addr,
				Msg: fmt.Sprintf("the JIT object list of %s at %#x was inconsistent on each of %d reads", descriptorSymbol, d.Addr, attempt),
				Err: last, Hint: "the JIT kept registering or freeing code (try again when it is idle) or the list is corrupt"}
		}
		time.Sleep(time.Duration(attempt) * time.Millisecond)
		if werr != nil {
			first, werr = c.walk()
		}
	}
}

type collector struct {
	o    Options
	mem  Memory
	maps []Mapping
	d    Descriptor
}

// walk reads the descriptor and the list of entries, without the
// symfiles.
func (c *collector) walk() ([]listEntry, *walkError) {
	order := c.d.Order
	var desc [descriptorSize]byte
	if err := c.mem.ReadMemory(c.d.Addr, desc[:]); err != nil {
		e := classifyReadError(fmt.Sprintf("reading %s at %#x", descriptorSymbol, c.d.Addr), c.d.Addr, err)
		return nil, &walkError{err: e}
	}
	if v := order.Uint32(desc[0:]); v != 1 {
		return nil, &walkError{err: &Error{Kind: ErrCorrupt, Addr: c.d.Addr,
			Msg:  fmt.Sprintf("%s at %#x has version %d, want 1", descriptorSymbol, c.d.Addr, v),
			Hint: "this is not LLVM's GDB JIT interface, or its memory is corrupt"}}
	}
	corrupt := func(addr uint64, err error, format string, args ...any) *walkError {
		return &walkError{retry: true, err: &Error{Kind: ErrCorrupt, Addr: addr, Msg: fmt.Sprintf(format, args...), Err: err}}
	}
	var list []listEntry
	seen := map[uint64]bool{}
	prev := uint64(0)
	for next := order.Uint64(desc[16:]); next != 0; {
		if len(list) >= c.o.MaxEntries {
			return nil, &walkError{err: &Error{Kind: ErrCorrupt, Addr: c.d.Addr,
				Msg:  fmt.Sprintf("the JIT object list of %s at %#x has more than %d entries", descriptorSymbol, c.d.Addr, c.o.MaxEntries),
				Hint: "the list is corrupt, or the JIT really holds that many objects (raise the entry limit)"}}
		}
		if seen[next] {
			return nil, corrupt(next, nil, "entry %#x appears twice in the list (a cycle after %d entries)", next, len(list))
		}
		if next%8 != 0 {
			return nil, corrupt(next, nil, "entry %d of the list is at misaligned address %#x", len(list), next)
		}
		seen[next] = true
		w, err := readU64s(c.mem, order, next, entrySize/8)
		if err != nil {
			e := classifyReadError(fmt.Sprintf("reading entry %d of the list at %#x", len(list), next), next, err)
			if e.Kind != ErrCorrupt {
				return nil, &walkError{err: e}
			}
			return nil, &walkError{err: e, retry: true}
		}
		e := listEntry{Addr: next, Next: w[0], Prev: w[1], Symfile: w[2], Size: w[3]}
		if e.Prev != prev {
			return nil, corrupt(next, nil, "entry %d of the list at %#x has prev %#x, want %#x", len(list), next, e.Prev, prev)
		}
		list = append(list, e)
		prev, next = next, e.Next
	}
	return list, nil
}

// read reads and checks the symfiles of list.
func (c *collector) read(list []listEntry) ([]Object, []*ObjectError, error) {
	var objs []Object
	var skipped []*ObjectError
	var total uint64
	for _, e := range list {
		skip := func(err error) {
			skipped = append(skipped, &ObjectError{Entry: e.Addr, Symfile: e.Symfile, Size: e.Size, Err: err})
		}
		if e.Symfile == 0 || e.Size == 0 {
			skip(errors.New("null or empty symfile"))
			continue
		}
		if e.Size > c.o.MaxObjectSize {
			skip(fmt.Errorf("larger than the %d-byte limit on one object", c.o.MaxObjectSize))
			continue
		}
		if lo, hi, ok := regionContaining(c.maps, e.Symfile, e.Size); !ok {
			if hi == 0 {
				skip(errNotMapped)
			} else {
				skip(fmt.Errorf("it runs past the end of the readable mapping %#x-%#x that holds its start", lo, hi))
			}
			continue
		}
		if e.Size > c.o.MaxTotalSize-total {
			return nil, nil, &Error{Kind: ErrTooLarge, Addr: e.Symfile,
				Msg:  fmt.Sprintf("the JIT objects total more than %d bytes", c.o.MaxTotalSize),
				Hint: "raise the total size limit if the machine has the memory"}
		}
		total += e.Size
		img := &memImage{mem: c.mem, addr: e.Symfile, size: e.Size}
		secs, ident, err := checkImage(img, int64(e.Size), c.d.Order)
		var hash uint64
		if err == nil {
			hash, err = img.hash()
		}
		if err != nil {
			var re *ReadError
			if errors.As(err, &re) {
				if ce := classifyReadError("reading symfile", e.Symfile, err); ce.Kind != ErrCorrupt {
					return nil, nil, ce
				}
			}
			skip(err)
			continue
		}
		objs = append(objs, Object{
			Name:  fmt.Sprintf("%s-%016x", ident, hash),
			Entry: e.Addr, Addr: e.Symfile, Size: e.Size, Sections: secs,
			mem: c.mem, hash: hash,
		})
	}
	return objs, skipped, nil
}
