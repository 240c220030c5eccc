//go:build linux

package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// This file writes the records perf record synthesizes for what existed
// before its events were opened (tools/perf/util/synthetic-events.c):
// the kernel's mapping and its modules', and per process a FORK and a
// COMM record per thread and an MMAP2 record per executable mapping, as
// /proc tells them. They carry the time 0, which puts them before
// everything the kernel records.

// Record types synthesized.
const (
	recordComm = 3
	recordFork = 7
)

// Misc bits: the CPU mode of what a record describes.
const miscUserMode = 2 // PERF_RECORD_MISC_USER

// A synth writes synthesized records.
type synth struct {
	w  io.Writer
	id uint64 // the sampled event's id, in each record's sample_id trailer
	// data has the mappings that are not executable written too (with
	// mmap_data, for perf's DWARF unwinding).
	data bool
	// mapped is told the file of each executable mapping written.
	mapped func(file string, kernel bool)
	buf    []byte
}

// begin starts a record of type typ in s.buf.
func (s *synth) begin(typ uint32, misc uint16) {
	s.buf = binary.NativeEndian.AppendUint32(s.buf[:0], typ)
	s.buf = binary.NativeEndian.AppendUint16(s.buf, misc)
	s.buf = binary.NativeEndian.AppendUint16(s.buf, 0) // size, set by end
}

func (s *synth) u32(v uint32) { s.buf = binary.NativeEndian.AppendUint32(s.buf, v) }
func (s *synth) u64(v uint64) { s.buf = binary.NativeEndian.AppendUint64(s.buf, v) }

// name appends a NUL-terminated string padded to 8 bytes.
func (s *synth) name(n string) {
	s.buf = append(s.buf, n...)
	s.buf = append(s.buf, make([]byte, 8-len(n)%8)...)
}

// end appends the sample_id trailer of the record's thread (the fields
// of settings.sampleType that a trailer holds: TID, TIME, CPU,
// IDENTIFIER), sets the size and writes the record.
func (s *synth) end(pid, tid uint32) error {
	s.u32(pid)
	s.u32(tid)
	s.u64(0) // time
	s.u64(0) // cpu, reserved
	s.u64(s.id)
	if len(s.buf) > 1<<16-8 {
		return nil // a name too long for a record: left out, as perf does
	}
	binary.NativeEndian.PutUint16(s.buf[6:], uint16(len(s.buf)))
	_, err := s.w.Write(s.buf)
	return err
}

// kernel writes the kernel's mapping as perf record does, for perf
// report and package perfdata: named kernel.kallsyms in brackets
// followed by _text, from _text to _etext, its offset _text's address;
// and a mapping per module. It does nothing if /proc/kallsyms hides the
// addresses.
func (s *synth) kernel() error {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	var text, etext uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() && (text == 0 || etext == 0) {
		line := sc.Text()
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		switch line[sp+1:] {
		case "_text":
			text, _ = strconv.ParseUint(strings.Fields(line)[0], 16, 64)
		case "_etext":
			etext, _ = strconv.ParseUint(strings.Fields(line)[0], 16, 64)
		}
	}
	if text == 0 || etext <= text {
		return nil
	}
	s.begin(recordMMAP, miscKernel)
	s.u32(^uint32(0))
	s.u32(0)
	s.u64(text)
	s.u64(etext - text)
	s.u64(text)
	s.name("[kernel.kallsyms]_text")
	if err := s.end(^uint32(0), 0); err != nil {
		return err
	}
	if s.mapped != nil {
		s.mapped("[kernel.kallsyms]", true)
	}
	b, err := os.ReadFile("/proc/modules")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		// name size refcount deps state address
		fl := strings.Fields(line)
		if len(fl) < 6 {
			continue
		}
		size, err1 := strconv.ParseUint(fl[1], 10, 64)
		addr, err2 := strconv.ParseUint(strings.TrimPrefix(fl[5], "0x"), 16, 64)
		if err1 != nil || err2 != nil || addr == 0 || size == 0 {
			continue
		}
		s.begin(recordMMAP, miscKernel)
		s.u32(^uint32(0))
		s.u32(0)
		s.u64(addr)
		s.u64(size)
		s.u64(0)
		s.name("[" + fl[0] + "]")
		if err := s.end(^uint32(0), 0); err != nil {
			return err
		}
	}
	return nil
}

// process writes the threads, commands and executable mappings of
// process pid, as /proc shows them now. A process that has gone is an
// error wrapping ErrNoProcess.
func (s *synth) process(pid int) error {
	dir := fmt.Sprintf("/proc/%d", pid)
	ppid, err := parentPID(pid)
	if err != nil {
		return err
	}
	tids, err := threads(pid)
	if err != nil {
		return err
	}
	for _, tid := range tids {
		comm, err := os.ReadFile(fmt.Sprintf("%s/task/%d/comm", dir, tid))
		if err != nil {
			continue // the thread exited
		}
		parent := uint32(pid)
		if tid == pid {
			parent = uint32(ppid)
		}
		s.begin(recordFork, 0)
		s.u32(uint32(pid))
		s.u32(parent)
		s.u32(uint32(tid))
		s.u32(parent)
		s.u64(0)
		if err := s.end(uint32(pid), uint32(tid)); err != nil {
			return err
		}
		s.begin(recordComm, 0)
		s.u32(uint32(pid))
		s.u32(uint32(tid))
		s.name(strings.TrimSuffix(string(comm), "\n"))
		if err := s.end(uint32(pid), uint32(tid)); err != nil {
			return err
		}
	}
	maps, err := os.ReadFile(dir + "/maps")
	if err != nil {
		return noProcess(pid, err)
	}
	for _, line := range bytes.Split(maps, []byte("\n")) {
		m, ok := parseMapsLine(string(line))
		if !ok || (m.perms[2] != 'x' && !s.data) || m.file == "[vsyscall]" {
			continue
		}
		s.begin(recordMMAP2, miscUserMode)
		s.u32(uint32(pid))
		s.u32(uint32(pid))
		s.u64(m.start)
		s.u64(m.end - m.start)
		s.u64(m.offset)
		s.u32(m.major)
		s.u32(m.minor)
		s.u64(m.inode)
		s.u64(0) // inode generation
		prot, flags := uint32(0), uint32(unix.MAP_PRIVATE)
		for i, c := range []byte{'r', 'w', 'x'} {
			if m.perms[i] == c {
				prot |= 1 << i // PROT_READ, PROT_WRITE, PROT_EXEC
			}
		}
		if m.perms[3] == 's' {
			flags = unix.MAP_SHARED
		}
		s.u32(prot)
		s.u32(flags)
		file := m.file
		if file == "" {
			file = "//anon"
		}
		s.name(file)
		if err := s.end(uint32(pid), uint32(pid)); err != nil {
			return err
		}
		if s.mapped != nil && prot&unix.PROT_EXEC != 0 {
			s.mapped(file, false)
		}
	}
	return nil
}

// A mapsLine is a line of /proc/PID/maps.
type mapsLine struct {
	start, end, offset uint64
	perms              string // "r-xp"
	major, minor       uint32
	inode              uint64
	file               string
}

// parseMapsLine parses "START-END PERMS OFFSET MAJ:MIN INODE FILE", the
// file name (which may have spaces) optional.
func parseMapsLine(line string) (mapsLine, bool) {
	var m mapsLine
	f := strings.Fields(line)
	if len(f) < 5 || len(f[1]) != 4 {
		return m, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	maj, min, ok2 := strings.Cut(f[3], ":")
	if !ok || !ok2 {
		return m, false
	}
	var err [6]error
	m.start, err[0] = strconv.ParseUint(lo, 16, 64)
	m.end, err[1] = strconv.ParseUint(hi, 16, 64)
	m.offset, err[2] = strconv.ParseUint(f[2], 16, 64)
	ma, e3 := strconv.ParseUint(maj, 16, 32)
	mi, e4 := strconv.ParseUint(min, 16, 32)
	m.inode, err[5] = strconv.ParseUint(f[4], 10, 64)
	err[3], err[4] = e3, e4
	for _, e := range err {
		if e != nil {
			return m, false
		}
	}
	if m.end <= m.start {
		return m, false
	}
	m.major, m.minor, m.perms = uint32(ma), uint32(mi), f[1]
	// The file name is the rest of the line after the fifth field,
	// spaces included.
	rest := line
	for range 5 {
		rest = strings.TrimLeft(rest, " \t")
		if i := strings.IndexAny(rest, " \t"); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
	}
	m.file = strings.TrimLeft(rest, " \t")
	return m, true
}

// threads returns the thread ids of process pid.
func threads(pid int) ([]int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, noProcess(pid, err)
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// parentPID returns the parent of process pid (/proc/PID/stat's fourth
// field, after the command in parentheses).
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, noProcess(pid, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	return strconv.Atoi(f[1])
}

// noProcess returns the error for process pid gone: ErrNoProcess, naming
// it, if err says it does not exist.
func noProcess(pid int, err error) error {
	if os.IsNotExist(err) || err == unix.ESRCH {
		return fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	return err
}

// processOwner returns the real user id of process pid.
func processOwner(pid int) (int, bool) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join("/proc", strconv.Itoa(pid)), &st); err != nil {
		return 0, false
	}
	return int(st.Uid), true
}
