//go:build linux

package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sampleRegsUser are the user registers a DWARF sample copies, by
// machine: all of them, as perf record --call-graph dwarf asks
// (arch/*/include/uapi/asm/perf_regs.h; x86-64's without the segment
// registers DS, ES, FS and GS).
var sampleRegsUser = map[string]uint64{
	"amd64": 0xff0fff,
	"arm64": 1<<33 - 1,
}

// settings are the events' settings.
type settings struct {
	event         string // CPUClock or Cycles
	freq          int
	callGraph     CallGraph
	stackBytes    int
	excludeKernel bool
	offCPU        bool
	switchID      uint64 // the sched:sched_switch tracepoint's id; 0: none
}

// sampleType is what each sample carries: with PERF_SAMPLE_IDENTIFIER
// first, so that the event of any record is known whatever the events.
func (s *settings) sampleType() uint64 {
	st := uint64(unix.PERF_SAMPLE_IDENTIFIER | unix.PERF_SAMPLE_IP | unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME |
		unix.PERF_SAMPLE_CPU | unix.PERF_SAMPLE_PERIOD | unix.PERF_SAMPLE_CALLCHAIN)
	if s.callGraph == DWARF {
		st |= unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER
	}
	return st
}

// attrs returns the events' attributes: the sampled event, which also
// carries the side records (mappings, commands, forks and exits,
// context switches), and the sched:sched_switch tracepoint, if any.
func (s *settings) attrs() []unix.PerfEventAttr {
	a := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_CPU_CLOCK,
		Sample:      uint64(s.freq),
		Sample_type: s.sampleType(),
		Bits: unix.PerfBitInherit | unix.PerfBitMmap | unix.PerfBitComm | unix.PerfBitFreq | unix.PerfBitTask |
			unix.PerfBitSampleIDAll | unix.PerfBitMmap2 | unix.PerfBitCommExec | unix.PerfBitUseClockID,
		Clockid: unix.CLOCK_MONOTONIC,
	}
	a.Size = uint32(binary.Size(a))
	if s.event == Cycles {
		a.Type, a.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES
	}
	if s.excludeKernel {
		a.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	}
	if s.offCPU {
		a.Bits |= unix.PerfBitContextSwitch
	}
	s.setStacks(&a)
	attrs := []unix.PerfEventAttr{a}
	if s.switchID != 0 {
		t := unix.PerfEventAttr{
			Type:        unix.PERF_TYPE_TRACEPOINT,
			Config:      s.switchID,
			Sample:      1,
			Sample_type: s.sampleType(),
			Bits:        unix.PerfBitInherit | unix.PerfBitSampleIDAll | unix.PerfBitUseClockID,
			Clockid:     unix.CLOCK_MONOTONIC,
		}
		t.Size = a.Size
		s.setStacks(&t)
		attrs = append(attrs, t)
	}
	return attrs
}

// setStacks sets what a's samples copy of the user stack with DWARF
// call graphs: the registers and StackBytes of stack, the kernel's
// callchain staying the kernel's part only.
func (s *settings) setStacks(a *unix.PerfEventAttr) {
	if s.callGraph != DWARF {
		return
	}
	// perf report and perf script unwind with libunwind or libdw, which
	// read a file's .eh_frame_hdr where it is mapped, in a mapping that
	// is not executable: record those too (mmap_data), as perf record
	// does.
	a.Bits |= unix.PerfBitExcludeCallchainUser | unix.PerfBitMmapData
	a.Sample_regs_user = sampleRegsUser[runtime.GOARCH]
	a.Sample_stack_user = uint32(s.stackBytes)
}

// names returns the events' names, as perf names them.
func (s *settings) names() []string {
	n := []string{s.event}
	if s.excludeKernel {
		n[0] += ":u"
	}
	if s.switchID != 0 {
		n = append(n, "sched:sched_switch")
	}
	return n
}

// encodeAttr returns a's bytes as the kernel reads them.
func encodeAttr(a *unix.PerfEventAttr) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.NativeEndian, a)
	return b.Bytes()
}

// openEvent opens the event a on thread pid (and, with inherit, what it
// starts), counting on cpu.
func openEvent(a *unix.PerfEventAttr, pid, cpu int) (int, error) {
	for {
		fd, err := unix.PerfEventOpen(a, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// eventID returns the id the kernel gave the event fd, which its
// records' PERF_SAMPLE_IDENTIFIER field carries.
func eventID(fd int) (uint64, error) {
	var id uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.PERF_EVENT_IOC_ID, uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return 0, fmt.Errorf("reading an event's id: %w", errno)
	}
	return id, nil
}

// paranoid returns kernel.perf_event_paranoid, 2 (the kernel's default)
// if unreadable.
func paranoid() int {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return 2
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 2
	}
	return n
}

// onlineCPUs returns the CPUs online (/sys/devices/system/cpu/online:
// "0-3,5"), or 0 to NumCPU-1 if that cannot be read.
func onlineCPUs() []int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if cpus, ok := parseCPUList(strings.TrimSpace(string(b))); err == nil && ok {
		return cpus
	}
	var cpus []int
	for i := range runtime.NumCPU() {
		cpus = append(cpus, i)
	}
	return cpus
}

// parseCPUList parses a CPU list, "0-3,5".
func parseCPUList(s string) ([]int, bool) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, false
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, len(cpus) > 0
}

// tracefsMount returns where tracefs is mounted (/proc/mounts), or "".
func tracefsMount() string {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return ""
	}
	debugfs := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch f[2] {
		case "tracefs":
			return unescapeMount(f[1])
		case "debugfs":
			if debugfs == "" {
				debugfs = filepath.Join(unescapeMount(f[1]), "tracing")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(debugfs, "events")); debugfs != "" && err == nil {
		return debugfs
	}
	return ""
}

// unescapeMount undoes the octal escapes of /proc/mounts (\040 for a
// space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// switchTracepoint returns the id of the sched:sched_switch tracepoint
// under tracefs (found if ""), or an error saying why it cannot be had.
func switchTracepoint(tracefs string) (uint64, error) {
	if tracefs == "" {
		if tracefs = tracefsMount(); tracefs == "" {
			return 0, errors.New("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")
		}
	}
	path := filepath.Join(tracefs, "events", "sched", "sched_switch", "id")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}
