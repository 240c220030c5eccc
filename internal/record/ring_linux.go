//go:build linux

package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ring is the ring buffer of one CPU's events: a metadata page, then
// 2^n pages of records the kernel writes at data_head and the reader
// consumes up to data_tail (perf_event_open(2), "MMAP layout"). Mapped
// writable, the kernel never overwrites what was not read: when the
// buffer is full it drops records and says how many with a LOST record.
type ring struct {
	fd   int    // the event the buffer belongs to
	mem  []byte // the whole mapping
	data []byte // the data pages
	meta *unix.PerfEventMmapPage
}

// minRingPages is the smallest buffer tried when a larger one is refused.
const minRingPages = 8

// mapRing maps a ring buffer of pages data pages (a power of two) for the
// event fd, or of fewer pages, down to minRingPages, when the locked
// memory limit (perf_event_mlock_kb, RLIMIT_MEMLOCK) refuses more.
func mapRing(fd, pages int) (*ring, error) {
	ps := os.Getpagesize()
	for {
		mem, err := unix.Mmap(fd, 0, (pages+1)*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err == nil {
			r := &ring{fd: fd, mem: mem, data: mem[ps:]}
			r.meta = (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
			return r, nil
		}
		if (err != unix.EPERM && err != unix.ENOMEM) || pages <= minRingPages {
			return nil, fmt.Errorf("mapping a ring buffer of %d KiB: %w", pages*ps>>10, err)
		}
		pages /= 2
	}
}

func (r *ring) close() {
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem, r.data, r.meta = nil, nil, nil
	}
}

// A drainStats counts what drain saw.
type drainStats struct {
	// samples counts the samples of the sampled event; blocks those of
	// the others (sched_switch), told apart by their identifier when
	// primary is not nil: the ids of the sampled event.
	samples, blocks int64
	primary         map[uint64]bool
	// mapped is told the file name of each executable mapping recorded.
	mapped func(file string, kernel bool)
}

// Record types drain looks at.
const (
	recordMMAP   = 1
	recordSample = 9
	recordMMAP2  = 10
)

// drain writes the records the kernel has written since the last call to
// w, in their order, as they are: the part of the buffer they fill, in
// one write, or two when it wraps around the buffer's end. It reads
// their headers only, and the file names of MMAP and MMAP2 records.
func (r *ring) drain(w interface{ Write([]byte) (int, error) }, st *drainStats) error {
	head := atomic.LoadUint64(&r.meta.Data_head) // the kernel's writes before it are visible
	tail := atomic.LoadUint64(&r.meta.Data_tail)
	if head == tail {
		return nil
	}
	size := uint64(len(r.data))
	if head-tail > size {
		return fmt.Errorf("ring buffer of event %d: head %#x is %d bytes past tail %#x, more than its %d", r.fd, head, head-tail, tail, size)
	}
	mask := size - 1
	// Walk the headers: records are 8-byte aligned and a header never
	// straddles the buffer's end.
	var scratch []byte
	for off := tail; off < head; {
		h := r.data[off&mask:]
		typ := binary.NativeEndian.Uint32(h)
		n := uint64(binary.NativeEndian.Uint16(h[6:]))
		if n < 8 || n > head-off {
			return fmt.Errorf("ring buffer of event %d: record of type %d claims %d bytes at %#x, %d left", r.fd, typ, n, off, head-off)
		}
		switch typ {
		case recordSample:
			if st.primary != nil && n >= 16 && !st.primary[binary.NativeEndian.Uint64(r.data[(off+8)&mask:])] {
				st.blocks++
			} else {
				st.samples++
			}
		case recordMMAP, recordMMAP2:
			if st.mapped != nil {
				rec := r.record(off, n, &scratch)
				misc := binary.NativeEndian.Uint16(rec[4:])
				mapped(rec, typ, misc, st.mapped)
			}
		}
		off += n
	}
	start, end := tail&mask, head&mask
	var err error
	if start < end || end == 0 {
		stop := end
		if end == 0 {
			stop = size
		}
		_, err = w.Write(r.data[start:stop])
	} else {
		if _, err = w.Write(r.data[start:]); err == nil {
			_, err = w.Write(r.data[:end])
		}
	}
	atomic.StoreUint64(&r.meta.Data_tail, head) // the kernel may now reuse the space
	return err
}

// record returns the n bytes of the record at off, copied into scratch
// when they wrap around the buffer's end.
func (r *ring) record(off, n uint64, scratch *[]byte) []byte {
	size := uint64(len(r.data))
	start := off & (size - 1)
	if start+n <= size {
		return r.data[start : start+n]
	}
	*scratch = append(append((*scratch)[:0], r.data[start:]...), r.data[:n-(size-start)]...)
	return *scratch
}

// mapped tells fn the file of an MMAP or MMAP2 record, rec, if the
// mapping is executable.
func mapped(rec []byte, typ uint32, misc uint16, fn func(string, bool)) {
	body := rec[8:]
	if len(body) < 32 {
		return
	}
	name := body[32:]
	exec := misc&miscMmapData == 0
	if typ == recordMMAP2 {
		if len(name) < 32 {
			return
		}
		exec = binary.NativeEndian.Uint32(name[24:])&unix.PROT_EXEC != 0
		name = name[32:]
	}
	if exec {
		fn(cString(name), misc&7 == miscKernel)
	}
}

// miscMmapData is PERF_RECORD_MISC_MMAP_DATA: an MMAP record of a
// mapping that is not executable.
const miscMmapData = 1 << 13
