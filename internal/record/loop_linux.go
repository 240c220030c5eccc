//go:build linux

package record

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// startFile writes the file's attributes and the records synthesized
// for what the targets had before the recording: the kernel's mapping
// and each process's threads and mappings.
func (r *recorder) startFile() error {
	names := r.s.names()
	var events []event
	for i := range r.attrs {
		a := &r.attrs[i]
		e := event{attr: encodeAttr(&a.attr), name: names[i]}
		for _, fd := range a.fds {
			id, err := eventID(fd)
			if err != nil {
				return err
			}
			e.ids = append(e.ids, id)
		}
		events = append(events, e)
	}
	r.ids = events[0].ids
	fw, err := newFileWriter(r.o.Output, events)
	if err != nil {
		return fmt.Errorf("writing %s: %w", r.o.Output.Name(), err)
	}
	r.fw = fw
	sy := &synth{w: fw, id: events[0].ids[0], mapped: r.mapped, data: r.s.callGraph == DWARF}
	if !r.s.excludeKernel {
		if err := sy.kernel(); err != nil {
			return err
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(r.targets)) {
		err := sy.process(pid)
		if errors.Is(err, ErrNoProcess) && r.child == nil {
			r.log("pid %d exited as the recording started", pid)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mapped notes a file mapped executable, for the build-ID feature.
func (r *recorder) mapped(file string, kernel bool) {
	if strings.HasPrefix(file, "/") || file == "[kernel.kallsyms]" || file == "[vdso]" {
		r.files[file] = kernel
	}
}

// finishedRound is PERF_RECORD_FINISHED_ROUND, which perf record writes
// after each pass over the ring buffers: perf report sorts the records
// by time a round at a time.
var finishedRound = []byte{68, 0, 0, 0, 0, 0, 8, 0}

// pollInterval is the longest the loop sleeps: the kernel wakes it when
// a ring buffer is half full, and it looks at every buffer, the
// processes and the clock at least this often.
const pollInterval = 100 * time.Millisecond

// loop copies the ring buffers into the file until the recording ends:
// the command exited, every process attached to exited, the duration
// elapsed, or a signal asked to stop.
func (r *recorder) loop(start time.Time) error {
	var deadline time.Time
	if r.o.Duration > 0 {
		deadline = start.Add(r.o.Duration)
	}
	if r.fw == nil {
		return errors.New("no file")
	}
	var pfds []unix.PollFd
	for _, cpu := range slices.Sorted(maps.Keys(r.rings)) {
		pfds = append(pfds, unix.PollFd{Fd: int32(r.rings[cpu].fd), Events: unix.POLLIN})
	}
	nrings := len(pfds)
	pfds = append(pfds, unix.PollFd{Fd: int32(r.wake), Events: unix.POLLIN})
	// The processes, whose pidfds are readable once they exit.
	procs := r.watch()
	defer procs.close()
	for _, fd := range procs.fds {
		pfds = append(pfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	st := &drainStats{mapped: r.mapped, primary: map[uint64]bool{}}
	for _, id := range r.ids {
		st.primary[id] = true
	}
	ended := false // by the user or the clock
	for {
		timeout := pollInterval
		if !deadline.IsZero() {
			timeout = min(timeout, time.Until(deadline))
		}
		if _, err := unix.Poll(pfds, int(max(timeout, 0)/time.Millisecond)); err != nil && err != unix.EINTR {
			return fmt.Errorf("poll: %w", err)
		}
		for i := range nrings {
			// An event whose threads have all exited reports a hang-up
			// for good: it is no longer polled, its buffer still read.
			if pfds[i].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				pfds[i].Fd = -1
			}
		}
		if err := r.drainAll(st); err != nil {
			return err
		}
		var buf [8]byte
		unix.Read(r.wake, buf[:])
		if r.stop.Load() > 0 || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			ended = true
			break
		}
		if r.child != nil && r.childExited() {
			break
		}
		if r.child == nil && procs.allExited() {
			r.log("every process recorded has exited")
			break
		}
	}
	if ended {
		if r.o.BeforeStop != nil && r.child == nil {
			if alive := procs.alive(); len(alive) > 0 {
				r.o.BeforeStop(alive)
			}
		}
		r.disable()
		if r.child != nil {
			// As perf record does: the command is asked to end.
			r.child.signal(unix.SIGTERM)
			<-r.child.done
		}
	}
	if err := r.drainAll(st); err != nil {
		return err
	}
	r.res.Samples, r.res.BlockSamples = st.samples, st.blocks
	return nil
}

// childExited reports whether the launched command has exited.
func (r *recorder) childExited() bool {
	select {
	case <-r.child.done:
		return true
	default:
		return false
	}
}

// drainAll copies what every ring buffer holds into the file, then marks
// the end of a round.
func (r *recorder) drainAll(st *drainStats) error {
	before := r.fw.dataSize
	for _, cpu := range slices.Sorted(maps.Keys(r.rings)) {
		if err := r.rings[cpu].drain(r.fw, st); err != nil {
			return fmt.Errorf("writing %s: %w", r.o.Output.Name(), err)
		}
	}
	if r.fw.dataSize > before {
		if _, err := r.fw.Write(finishedRound); err != nil {
			return fmt.Errorf("writing %s: %w", r.o.Output.Name(), err)
		}
	}
	return nil
}

// disable stops the events, and those inherited from them.
func (r *recorder) disable() {
	for i := range r.attrs {
		for _, fd := range r.attrs[i].fds {
			unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
		}
	}
}

// procWatch watches processes for their exit.
type procWatch struct {
	pids []int
	fds  []int // pidfds, -1 where none could be had
}

// watch returns the watch of the processes attached to (the command's
// end is the child's).
func (r *recorder) watch() *procWatch {
	w := &procWatch{}
	if r.child != nil {
		return w
	}
	for _, pid := range slices.Sorted(maps.Keys(r.targets)) {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			fd = -1
		}
		w.pids = append(w.pids, pid)
		w.fds = append(w.fds, fd)
	}
	return w
}

func (w *procWatch) exited(i int) bool {
	if w.fds[i] < 0 {
		return unix.Kill(w.pids[i], 0) == unix.ESRCH
	}
	p := []unix.PollFd{{Fd: int32(w.fds[i]), Events: unix.POLLIN}}
	n, _ := unix.Poll(p, 0)
	return n > 0
}

func (w *procWatch) allExited() bool {
	for i := range w.pids {
		if !w.exited(i) {
			return false
		}
	}
	return len(w.pids) > 0
}

func (w *procWatch) alive() []int {
	var out []int
	for i, pid := range w.pids {
		if !w.exited(i) {
			out = append(out, pid)
		}
	}
	return out
}

func (w *procWatch) close() {
	for _, fd := range w.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// finish writes the feature sections and the header.
func (r *recorder) finish() error {
	var uts unix.Utsname
	unix.Uname(&uts)
	host, _ := os.Hostname()
	ft := features{
		hostname:   host,
		osRelease:  unix.ByteSliceToString(uts.Release[:]),
		version:    "jitpprof",
		arch:       unix.ByteSliceToString(uts.Machine[:]),
		cpusOnline: uint32(len(r.cpus)),
		cpusAvail:  uint32(slices.Max(r.cpus) + 1),
		cmdLine:    r.o.CmdLine,
		buildIDs:   readBuildIDs(r.files),
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/present"); err == nil {
		if cpus, ok := parseCPUList(strings.TrimSpace(string(b))); ok {
			ft.cpusAvail = uint32(slices.Max(cpus) + 1)
		}
	}
	if err := r.fw.finish(ft); err != nil {
		return fmt.Errorf("writing %s: %w", r.o.Output.Name(), err)
	}
	if st, err := r.o.Output.Stat(); err == nil {
		r.res.Bytes = st.Size()
	}
	return nil
}
