package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jitpprof/pprof/internal/record"
)

// -record runs a command, or attaches to running processes, records them
// in process with the kernel's perf events (package internal/record)
// into a perf.data file, and hands that file to upstream's driver as the
// profile source: the profile is made by the same code that reads any
// perf.data (package internal/perfdata, readPerfData), JIT stage
// included, and every report flag applies to it.

// recordUsage is the help text for the recording flags.
const recordUsage = `  Recording (jitpprof, Linux):
    -record               Record the command after -- (pprof -top -record -- make),
                          or with -pid running processes, and report on it
    -pid PID[,PID...]     Attach to these processes, all their threads
    -seconds N            How long: by default until the command exits, or
                          30 s with -pid; Ctrl-C or SIGTERM ends it early
    -frequency N          Samples per second of CPU time (default 999)
    -event E              cpu-clock (default: works in VMs and containers)
                          or cycles (hardware; cpu-clock where there is none)
    -call_graph M         fp: frame pointers (default); dwarf[,BYTES]: user
                          stacks copied and unwound with their DWARF CFI
    -offcpu               Also record when threads block: -sample_index=offcpu
                          (time off CPU) or wall (on and off CPU)
    -record_output FILE   Keep the recording, a perf.data that perf report reads,
                          and what names its JIT code in FILE.jit
    -record_jit           Switch the runtimes' JIT output on (NODE_OPTIONS,
                          JAVA_TOOL_OPTIONS, ...; added to what is set) and copy
                          LLVM JIT objects and JVM perf maps (default true)
  Processes of other users, and kernel frames when kernel.perf_event_paranoid
  is 2 or more, need root or CAP_PERFMON; without, user space is recorded.`

// defaultAttachSeconds is how long -pid records without -seconds, as
// Go's CPU profile handler does.
const defaultAttachSeconds = 30

// recordFlags are the flags of -record.
type recordFlags struct {
	record    *bool
	pids      *string
	frequency *int
	event     *string
	callGraph *string
	offCPU    *bool
	output    *string
	jit       *bool
}

func defineRecordFlags(fs FlagSet) recordFlags {
	fs.AddExtraUsage(recordUsage)
	return recordFlags{
		record:    fs.Bool("record", false, "Record the command after -- (or -pid processes) and report on it"),
		pids:      fs.String("pid", "", "Processes to attach to with -record, separated by commas"),
		frequency: fs.Int("frequency", record.DefaultFrequency, "Samples per second with -record"),
		event:     fs.String("event", record.CPUClock, "Event sampled with -record: cpu-clock or cycles"),
		callGraph: fs.String("call_graph", "fp", "Stacks with -record: fp or dwarf[,BYTES]"),
		offCPU:    fs.Bool("offcpu", false, "Record off-CPU time too with -record"),
		output:    fs.String("record_output", "", "Keep the -record recording in this perf.data file"),
		jit:       fs.Bool("record_jit", true, "With -record, have the runtimes name their JIT code"),
	}
}

// given reports whether -record or a flag that needs it was given: then
// the command line needs no profile source (-record -pid), and
// recordSources says what is wrong with one that lacks it.
func (f recordFlags) given() bool {
	return *f.record || *f.pids != "" || *f.offCPU || *f.output != ""
}

// recordSources runs the recording the flags ask for, if any, and
// returns the sources upstream reads: the recording's file instead of
// the command's words. Without -record, it checks that no recording flag
// was given and returns args as they are.
func (r *run) recordSources(args []string) ([]string, error) {
	f := r.recordFlags
	if !*f.record {
		for _, fl := range []struct {
			name string
			set  bool
		}{{"pid", *f.pids != ""}, {"offcpu", *f.offCPU}, {"record_output", *f.output != ""}} {
			if fl.set {
				return nil, fmt.Errorf("-%s needs -record", fl.name)
			}
		}
		return args, nil
	}
	o := record.Options{Frequency: *f.frequency, Event: *f.event, OffCPU: *f.offCPU,
		Signals: []os.Signal{os.Interrupt, syscall.SIGTERM}, CmdLine: os.Args,
		Log: func(s string) { r.ui.PrintErr(s) }}
	var err error
	if o.CallGraph, o.StackBytes, err = parseCallGraph(*f.callGraph); err != nil {
		return nil, err
	}
	if *f.pids != "" {
		if len(args) > 0 {
			return nil, fmt.Errorf("-record: a command (%s) and -pid: one or the other", args[0])
		}
		if o.PIDs, err = parsePIDs(*f.pids); err != nil {
			return nil, err
		}
	} else if len(args) == 0 {
		return nil, errors.New("-record: no command to record (pprof -record [flags] -- COMMAND [ARGS...]) and no -pid")
	} else {
		o.Command = args
	}
	if s := r.flags.intFlag(flagSeconds); s > 0 {
		o.Duration = time.Duration(s) * time.Second
	} else if len(o.PIDs) > 0 {
		o.Duration = defaultAttachSeconds * time.Second
	}
	path := *f.output
	if path == "" {
		dir, err := os.MkdirTemp("", "pprof-record-")
		if err != nil {
			return nil, err
		}
		r.recordTemp = dir
		name := "perf.data"
		if len(o.Command) > 0 {
			name = filepath.Base(o.Command[0]) + ".perf.data"
		}
		path = filepath.Join(dir, name)
	}
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// What names the JIT code goes into FILE.jit (see recordjit.go).
	jitDir := jitDirOf(path)
	os.RemoveAll(jitDir) // another recording's
	steps := r.recordJITSteps(o.Command, o.Dir, jitDir)
	o.Env, o.HoldAtExit, o.BeforeStop = steps.env, steps.holdAtExit, steps.beforeStop
	r.recordPath, r.recordStart = path, time.Now()
	if len(o.PIDs) > 0 {
		r.ui.PrintErr(fmt.Sprintf("Recording %s for %v (Ctrl-C ends it early)", recordTarget(o), o.Duration))
	}
	o.Output = out
	res, err := record.Record(o)
	if err != nil {
		if *f.output != "" {
			os.Remove(path)
		}
		var ce *record.CommandError
		if errors.As(err, &ce) {
			return nil, &ExitError{Status: ce.Status, Err: err}
		}
		return nil, err
	}
	r.ui.PrintErr(recordSummary(o, res, path, *f.output != ""))
	if e := res.Exit; e != nil && e.Code != 0 && !e.Ended {
		r.recordExit = e.Code
	}
	return []string{path}, nil
}

// recordTarget names what is recorded.
func recordTarget(o record.Options) string {
	if len(o.PIDs) == 1 {
		return fmt.Sprintf("pid %d", o.PIDs[0])
	}
	if len(o.PIDs) > 1 {
		var s []string
		for _, p := range o.PIDs {
			s = append(s, strconv.Itoa(p))
		}
		return "pids " + strings.Join(s, ", ")
	}
	return strings.Join(o.Command, " ")
}

// recordSummary is the line that says what was recorded.
func recordSummary(o record.Options, res *record.Result, path string, kept bool) string {
	var b strings.Builder
	name := recordTarget(o)
	if len(o.Command) > 0 {
		name = fmt.Sprintf("%s (pid %d)", filepath.Base(o.Command[0]), res.PIDs[0])
	}
	fmt.Fprintf(&b, "Recorded %s for %.2fs: %d samples of %s", name, res.Duration.Seconds(), res.Samples, res.Event)
	if res.BlockSamples > 0 {
		fmt.Fprintf(&b, " and %d stacks where threads blocked", res.BlockSamples)
	}
	if res.KernelExcluded {
		b.WriteString(" (user space only: kernel frames left out)")
	}
	if e := res.Exit; e != nil {
		fmt.Fprintf(&b, "; %s %v", filepath.Base(o.Command[0]), e)
	}
	if kept {
		fmt.Fprintf(&b, "; saved in %s (%.1f MB)", path, float64(res.Bytes)/(1<<20))
	}
	return b.String()
}

// parseCallGraph reads -call_graph: fp, or dwarf with a stack size.
func parseCallGraph(s string) (record.CallGraph, int, error) {
	mode, size, hasSize := strings.Cut(s, ",")
	switch mode {
	case "fp":
		if !hasSize {
			return record.FramePointers, 0, nil
		}
	case "dwarf":
		if !hasSize {
			return record.DWARF, 0, nil
		}
		n, err := strconv.Atoi(size)
		if err == nil && n >= 8 && n <= 65528 {
			return record.DWARF, n, nil
		}
		return 0, 0, fmt.Errorf("-call_graph %s: the stack size is 8 to 65528 bytes", s)
	}
	return 0, 0, fmt.Errorf("-call_graph %q: fp or dwarf[,BYTES]", s)
}

// parsePIDs reads -pid: pids separated by commas.
func parsePIDs(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.Split(s, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("-pid %s: %q is not a process id", s, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// An ExitError is what PProf returns when pprof should exit with a
// status of its own: that of the command -record ran, when it failed
// (after the report), or a shell's for a command that could not be
// started (127: not found; 126: not executable). Err, if not nil, says
// why.
type ExitError struct {
	Status int
	Err    error
}

func (e *ExitError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit status %d", e.Status)
}

func (e *ExitError) Unwrap() error { return e.Err }

// displayName names path in messages: as it is, or, for this run's
// recording when it is not kept (a temporary file, gone once pprof ends),
// and for what is in its directory, by what it is.
func (r *run) displayName(path string) string {
	if r.recordTemp == "" || r.recordPath == "" {
		return path
	}
	switch {
	case path == r.recordPath:
		return "the recording"
	case path == jitDirOf(r.recordPath):
		return "the recording's JIT files"
	case strings.HasPrefix(path, r.recordTemp+string(filepath.Separator)):
		return "the recording's " + filepath.Base(path)
	}
	return path
}

// displayText is msg with the paths of this run's recording, when it is
// not kept, replaced as displayName names them.
func (r *run) displayText(msg string) string {
	if r.recordTemp == "" || r.recordPath == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, jitDirOf(r.recordPath)+string(filepath.Separator), "the recording's ")
	msg = strings.ReplaceAll(msg, jitDirOf(r.recordPath), "the recording's JIT files")
	return strings.ReplaceAll(msg, r.recordPath, "the recording")
}

// closeRecording removes the temporary recording.
func (r *run) closeRecording() {
	if r.recordTemp != "" {
		os.RemoveAll(r.recordTemp)
	}
}
