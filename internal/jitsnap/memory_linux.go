//go:build linux

package jitsnap

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// processMemory reads the memory of a live process with
// process_vm_readv(2), or by pread(2) on /proc/PID/mem where that system
// call is missing or filtered (some container seccomp profiles). Neither
// stops the process. It is used by one goroutine at a time.
type processMemory struct {
	pid  int
	mem  *os.File // /proc/PID/mem, once process_vm_readv failed with ENOSYS or EPERM
	noVM bool     // process_vm_readv is unavailable: use mem
}

var _ Memory = (*processMemory)(nil)

// ReadMemory reads the target's bytes at [addr, addr+len(p)) in chunks
// of at most maxReadChunk.
func (m *processMemory) ReadMemory(addr uint64, p []byte) error {
	// The limit is also where a 32-bit jitsnap's uintptr ends.
	limit := min(uint64(math.MaxInt64), uint64(^uintptr(0)))
	if addr > limit || uint64(len(p)) > limit-addr {
		return &ReadError{Addr: addr, Len: uint64(len(p)), Err: errors.New("address beyond what this process can address")}
	}
	for done := 0; done < len(p); {
		chunk := min(len(p)-done, maxReadChunk)
		at := addr + uint64(done)
		n, err := m.read(at, p[done:done+chunk])
		if err != nil {
			return &ReadError{Addr: at, Len: uint64(chunk), Err: err}
		}
		if n == 0 {
			return &ReadError{Addr: at, Len: uint64(chunk), Err: unix.EFAULT}
		}
		done += n
	}
	return nil
}

// read reads up to len(p) bytes at addr; fewer means the next page is
// not readable.
func (m *processMemory) read(addr uint64, p []byte) (int, error) {
	if !m.noVM {
		local := []unix.Iovec{{Base: &p[0]}}
		local[0].SetLen(len(p))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
		n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
		if err != unix.ENOSYS && err != unix.EPERM {
			return n, err
		}
		// EPERM may be a seccomp filter rather than the kernel's access
		// check; /proc/PID/mem applies the same check and says EACCES if
		// it is the latter.
		m.noVM = true
	}
	if m.mem == nil {
		f, err := os.Open(fmt.Sprintf("/proc/%d/mem", m.pid))
		if err != nil {
			return 0, err
		}
		m.mem = f
	}
	n, err := m.mem.ReadAt(p, int64(addr))
	if n > 0 {
		return n, nil
	}
	return n, err
}

func (m *processMemory) close() error {
	if m.mem == nil {
		return nil
	}
	return m.mem.Close()
}

// fileOwner returns the uid owning a file.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// fileInode returns a file's inode number.
func fileInode(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}
