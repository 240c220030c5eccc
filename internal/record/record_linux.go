//go:build linux

package record

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Record records what o says into o.Output and returns what it
// recorded. A command that cannot be started is a *CommandError; a
// refusal of the kernel a *PermissionError; a process to attach to that
// does not exist an error wrapping ErrNoProcess. Whatever happens, a
// launched command is not left stopped or traced, and processes attached
// to are not affected.
func Record(o Options) (*Result, error) {
	s, err := o.settings()
	if err != nil {
		return nil, err
	}
	r := &recorder{o: &o, s: s, cpus: onlineCPUs(), rings: map[int]*ring{}, files: map[string]bool{}, wake: -1}
	defer r.closeEvents()
	defer r.closeWake()
	return r.run()
}

// settings checks o and returns the events' settings.
func (o *Options) settings() (settings, error) {
	s := settings{event: o.Event, freq: o.Frequency, callGraph: o.CallGraph, stackBytes: o.StackBytes, offCPU: o.OffCPU}
	switch {
	case len(o.Command) == 0 && len(o.PIDs) == 0:
		return s, errors.New("nothing to record: no command and no pid")
	case len(o.Command) > 0 && len(o.PIDs) > 0:
		return s, errors.New("a command and pids to record: one or the other")
	case o.Output == nil:
		return s, errors.New("no file to record into")
	}
	if s.event == "" {
		s.event = CPUClock
	}
	if s.event != CPUClock && s.event != Cycles {
		return s, fmt.Errorf("event %q: %s or %s", s.event, CPUClock, Cycles)
	}
	if s.freq == 0 {
		s.freq = DefaultFrequency
	}
	if s.freq < 1 {
		return s, fmt.Errorf("frequency %d: at least 1 sample per second", s.freq)
	}
	if max := maxSampleRate(); max > 0 && s.freq > max {
		return s, fmt.Errorf("frequency %d: more than kernel.perf_event_max_sample_rate, %d", s.freq, max)
	}
	if s.callGraph == DWARF {
		if sampleRegsUser[runtime.GOARCH] == 0 {
			return s, fmt.Errorf("-call_graph dwarf: user stacks are unwound on amd64 and arm64 only, not %s", runtime.GOARCH)
		}
		if s.stackBytes == 0 {
			s.stackBytes = DefaultStackBytes
		}
		s.stackBytes = s.stackBytes &^ 7
		if s.stackBytes < 8 || s.stackBytes > 65528 {
			return s, fmt.Errorf("stack size %d: 8 to 65528 bytes", o.StackBytes)
		}
	}
	for _, pid := range o.PIDs {
		if pid <= 0 {
			return s, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
		}
	}
	return s, nil
}

// maxSampleRate returns kernel.perf_event_max_sample_rate, 0 if unknown.
func maxSampleRate() int {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_max_sample_rate")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// A recorder is one recording in progress.
type recorder struct {
	o      *Options
	s      settings
	cpus   []int
	attrs  []attrFDs
	rings  map[int]*ring // by CPU
	wakeMu sync.Mutex
	wake   int // an eventfd that wakes the loop; -1 once closed
	child  *child
	// targets are the threads events are open on, by process.
	targets map[int]map[int]bool
	files   map[string]bool // executable files mapped; true: the kernel's
	fw      *fileWriter
	ids     []uint64 // the sampled event's
	res     Result
	stop    atomic.Int32 // stop requests (signals) received
}

// attrFDs is an event and the file descriptors opened for it.
type attrFDs struct {
	attr unix.PerfEventAttr
	fds  []int
}

func (r *recorder) log(format string, args ...any) {
	if r.o.Log != nil {
		r.o.Log(fmt.Sprintf(format, args...))
	}
}

func (r *recorder) run() (*Result, error) {
	o := r.o
	if o.OffCPU {
		id, err := switchTracepoint(o.Tracefs)
		if err == nil {
			r.s.switchID = id
		} else {
			r.log("-offcpu: no stacks of where threads block: the sched:sched_switch tracepoint's id is out of reach (%v; it needs access to tracefs, as root)", err)
		}
	}
	var err error
	if r.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	// Signals are caught from before the command starts: one that ends
	// the recording early still has it reported.
	sigc := make(chan os.Signal, 4)
	if len(o.Signals) > 0 {
		signal.Notify(sigc, o.Signals...)
		defer signal.Stop(sigc)
	}
	stopSignals := make(chan struct{})
	defer close(stopSignals)
	go func() {
		for {
			select {
			case <-sigc:
				if r.stop.Add(1) > 1 && r.child != nil {
					r.child.signal(unix.SIGKILL)
				}
				r.notify()
			case <-stopSignals:
				return
			}
		}
	}()

	if len(o.Command) > 0 {
		c, err := startCommand(o, r.notify)
		if err != nil {
			return nil, err
		}
		r.child = c
		defer c.close()
		r.res.PIDs = []int{c.pid}
		if st, _ := c.result(); st != nil {
			c.release <- false
			return nil, fmt.Errorf("%s ended before it started: %v", o.Command[0], st)
		}
		r.targets = map[int]map[int]bool{c.pid: {c.pid: true}}
		if err := r.openAll(o.Command[0]); err != nil {
			c.release <- false // it has not run any code: ended
			return nil, err
		}
	} else {
		r.targets = map[int]map[int]bool{}
		for _, pid := range o.PIDs {
			r.targets[pid] = map[int]bool{}
		}
		r.res.PIDs = slices.Clone(o.PIDs)
		if err := r.openAll(fmt.Sprintf("pid %d", o.PIDs[0])); err != nil {
			return nil, err
		}
	}
	r.res.Event = r.s.event
	r.res.KernelExcluded = r.s.excludeKernel
	r.res.BlockStacks = r.s.switchID != 0

	start := time.Now()
	if err := r.startFile(); err != nil {
		if r.child != nil {
			r.child.release <- false
		}
		return nil, err
	}
	if r.child != nil {
		r.child.release <- true
	}
	if err := r.loop(start); err != nil {
		if r.child != nil {
			r.child.signal(unix.SIGTERM) // not left running unrecorded, with pprof waiting for it
		}
		return nil, err
	}
	r.res.Duration = time.Since(start)
	if err := r.finish(); err != nil {
		return nil, err
	}
	if r.child != nil {
		st, holdErr := r.child.result()
		r.res.Exit = st
		if holdErr != nil {
			r.log("holding %s at its exit: %v", o.Command[0], holdErr)
		}
	}
	return &r.res, nil
}

// notify wakes the loop.
func (r *recorder) notify() {
	r.wakeMu.Lock()
	defer r.wakeMu.Unlock()
	if r.wake >= 0 {
		var one [8]byte
		one[0] = 1
		unix.Write(r.wake, one[:])
	}
}

func (r *recorder) closeWake() {
	r.wakeMu.Lock()
	defer r.wakeMu.Unlock()
	if r.wake >= 0 {
		unix.Close(r.wake)
		r.wake = -1
	}
}

// openAll opens the events on every thread of the targets, falling back
// as perf record does: to user space only where the kernel refuses
// kernel samples to this user, to cpu-clock where there are no cycles.
// what names the target in errors.
func (r *recorder) openAll(what string) error {
	// What was given up is said once the events are open: not before
	// a refusal that ends the recording anyway.
	var fallbacks []string
	for {
		err := r.openTargets()
		if err == nil {
			for _, s := range fallbacks {
				r.log("%s", s)
			}
			return nil
		}
		r.closeEvents()
		var fb *fallback
		if !errors.As(err, &fb) {
			return err
		}
		switch fb.kind {
		case fallbackUser:
			r.s.excludeKernel = true
			if r.s.switchID != 0 {
				r.s.switchID = 0
				fallbacks = append(fallbacks, "-offcpu: no stacks of where threads block: the sched:sched_switch tracepoint is a kernel event")
			}
			fallbacks = append(fallbacks, fmt.Sprintf("kernel frames are left out: kernel.perf_event_paranoid is %d and pprof lacks CAP_PERFMON; user space only (to include the kernel: sudo sysctl kernel.perf_event_paranoid=1, or run pprof as root)", paranoid()))
		case fallbackCPUClock:
			r.s.event = CPUClock
			fallbacks = append(fallbacks, fmt.Sprintf("the cycles event is not available here (%v): recording cpu-clock instead", fb.err))
		case fallbackNoOffCPU:
			r.s.offCPU, r.s.switchID = false, 0
			fallbacks = append(fallbacks, fmt.Sprintf("-offcpu: this kernel does not record context switches (%v): CPU time only", fb.err))
		case fallbackNoSwitch:
			r.s.switchID = 0
			fallbacks = append(fallbacks, fmt.Sprintf("-offcpu: no stacks of where threads block: the kernel refuses the sched:sched_switch tracepoint (%v; it needs CAP_PERFMON, or kernel.perf_event_paranoid -1)", fb.err))
		default:
			return r.refused(what, fb.err)
		}
	}
}

// Fallback kinds.
const (
	fallbackNone = iota
	fallbackUser
	fallbackCPUClock
	fallbackNoSwitch
	fallbackNoOffCPU
)

// A fallback is an event the kernel refused, and what to try instead.
type fallback struct {
	kind int
	err  error
}

func (f *fallback) Error() string { return f.err.Error() }

// refused returns the error for a refusal of the kernel to record what.
func (r *recorder) refused(what string, err error) error {
	pe := &PermissionError{What: "recording " + what, Paranoid: paranoid(), Err: err}
	for pid := range r.targets {
		if uid, ok := processOwner(pid); ok && uid != os.Geteuid() && os.Geteuid() != 0 {
			pe.Other = true
		}
	}
	return pe
}

// openTargets opens the events on every CPU for each target thread: all
// threads of the processes attached to, listed again until no new one
// appears (threads they start from then on inherit the events), or the
// launched command's one.
func (r *recorder) openTargets() error {
	r.attrs = nil
	for _, a := range r.s.attrs() {
		r.attrs = append(r.attrs, attrFDs{attr: a})
	}
	for _, tids := range r.targets {
		clear(tids)
	}
	for round := 0; ; round++ {
		added := false
		for _, pid := range slices.Sorted(maps.Keys(r.targets)) {
			tids := r.targets[pid]
			list := []int{pid}
			if r.child == nil {
				var err error
				if list, err = threads(pid); err != nil {
					if round == 0 {
						return err
					}
					continue // it exited meanwhile
				}
			}
			for _, tid := range list {
				if tids[tid] {
					continue
				}
				err := r.openThread(tid)
				if errors.Is(err, unix.ESRCH) {
					continue // the thread exited
				}
				if err != nil {
					return err
				}
				tids[tid] = true
				added = true
			}
			if len(tids) == 0 {
				return fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
			}
		}
		if !added || r.child != nil || round > 100 {
			return nil
		}
	}
}

// openThread opens each event on thread tid on every CPU, each CPU's
// writing into the CPU's ring buffer.
func (r *recorder) openThread(tid int) error {
	for i := range r.attrs {
		a := &r.attrs[i]
		for _, cpu := range r.cpus {
			fd, err := openEvent(&a.attr, tid, cpu)
			if err != nil {
				return r.classify(i, err)
			}
			a.fds = append(a.fds, fd)
			if rg := r.rings[cpu]; rg != nil {
				if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, rg.fd); err != nil {
					return fmt.Errorf("redirecting an event to CPU %d's ring buffer: %w", cpu, err)
				}
				continue
			}
			rg, err := mapRing(fd, r.ringPages())
			if err != nil {
				return err
			}
			r.rings[cpu] = rg
		}
	}
	return nil
}

// classify turns the kernel's refusal to open event i into the fallback
// to take, or the error to report.
func (r *recorder) classify(i int, err error) error {
	switch {
	case err == unix.ESRCH:
		return err
	case i > 0 && err != unix.EMFILE:
		return &fallback{fallbackNoSwitch, err}
	case err == unix.EACCES || err == unix.EPERM:
		if !r.s.excludeKernel {
			return &fallback{fallbackUser, err}
		}
		return &fallback{fallbackNone, err}
	case r.s.event == Cycles && (err == unix.ENOENT || err == unix.EOPNOTSUPP || err == unix.ENODEV):
		return &fallback{fallbackCPUClock, err}
	case r.s.offCPU && err == unix.EINVAL:
		// A kernel before 4.3 has no context_switch records.
		return &fallback{fallbackNoOffCPU, err}
	case err == unix.EMFILE:
		return fmt.Errorf("opening events: %w (one per thread and CPU: %d CPUs; raise the limit with ulimit -n)", err, len(r.cpus))
	}
	return fmt.Errorf("perf_event_open: %w", err)
}

// ringPages is the size of each CPU's ring buffer in pages: 512 KiB
// (perf record's default), 2 MiB with DWARF stacks, whose samples are
// 8 KiB and more; mapRing takes less where the locked memory limit
// (kernel.perf_event_mlock_kb, 516 KiB per CPU for users without
// CAP_IPC_LOCK) refuses that.
func (r *recorder) ringPages() int {
	bytes := 512 << 10
	if r.s.callGraph == DWARF {
		bytes = 2 << 20
	}
	return max(bytes/os.Getpagesize(), minRingPages)
}

// closeEvents closes the events and unmaps their buffers.
func (r *recorder) closeEvents() {
	for i := range r.attrs {
		for _, fd := range r.attrs[i].fds {
			unix.Close(fd)
		}
		r.attrs[i].fds = nil
	}
	for cpu, rg := range r.rings {
		rg.close()
		delete(r.rings, cpu)
	}
}
