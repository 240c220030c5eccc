// Command tracecost measures what holding a recorded command at its exit
// costs (pprof -record's hold, where an LLVM JIT's objects are copied
// out of it: package record's Options.HoldAtExit with jitsnap.Snapshot):
// it records a command RUNS times without the hold and RUNS times with
// it, alternating, and prints per mode the median wall time, the median
// CPU time of the command (user+sys, its children included), the median
// CPU time of the recorder itself, the command's peak RSS, and for the
// held runs the time the command was held at its exit for the snapshot.
//
// Usage:
//
//	tracecost [-r RUNS] [-o DIR] NAME COMMAND [ARG...]
//
// NAME labels the output line. The snapshots go to DIR (a temporary
// directory, removed, by default).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/jitpprof/pprof/internal/jitsnap"
	"github.com/jitpprof/pprof/internal/record"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("tracecost: ")
	runs := flag.Int("r", 5, "runs per mode")
	dir := flag.String("o", "", "directory for the snapshots (default: a temporary one)")
	flag.Parse()
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	name, args := flag.Arg(0), flag.Args()[1:]
	if *dir == "" {
		d, err := os.MkdirTemp("", "tracecost-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	var plain, traced []sample
	for i := 0; i < *runs; i++ {
		s, err := measure(args, "")
		if err == nil {
			plain = append(plain, s)
			s, err = measure(args, *dir)
			traced = append(traced, s)
		}
		if err != nil {
			log.Print(err)
			os.RemoveAll(*dir)
			os.Exit(1)
		}
	}
	fmt.Printf("%-12s %-9s %9s %9s %9s %9s %9s\n", "workload", "mode", "wall_s", "cmd_cpu_s", "self_cpu_s", "rss_kib", "held_s")
	for _, m := range []struct {
		mode string
		s    []sample
	}{{"recorded", plain}, {"held", traced}} {
		fmt.Printf("%-12s %-9s %9.3f %9.3f %9.3f %9d %9.3f\n", name, m.mode,
			median(m.s, func(s sample) float64 { return s.wall }),
			median(m.s, func(s sample) float64 { return s.cmdCPU }),
			median(m.s, func(s sample) float64 { return s.selfCPU }),
			int64(median(m.s, func(s sample) float64 { return float64(s.rss) })),
			median(m.s, func(s sample) float64 { return s.held }))
	}
}

// A sample is one run.
type sample struct {
	wall, cmdCPU, selfCPU, held float64 // seconds
	rss                         int64   // KiB
}

// measure records args once, held at its exit for a snapshot into dir
// unless dir is "".
func measure(args []string, dir string) (sample, error) {
	var s sample
	out, err := os.CreateTemp("", "tracecost-*.data")
	if err != nil {
		return s, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	o := record.Options{Command: args, Output: out, Stdout: os.Stderr, Stderr: os.Stderr}
	if dir != "" {
		o.HoldAtExit = func(pid int) error {
			start := time.Now()
			jitsnap.Snapshot(pid, filepath.Join(dir, fmt.Sprint(pid))) // a command without a JIT has nothing to copy
			s.held = time.Since(start).Seconds()
			return nil
		}
	}
	self, children := usage(syscall.RUSAGE_SELF), usage(syscall.RUSAGE_CHILDREN)
	start := time.Now()
	res, err := record.Record(o)
	if err != nil {
		return s, fmt.Errorf("%q: %w", args, err)
	}
	if res.Exit == nil || res.Exit.Code != 0 {
		return s, fmt.Errorf("%q: %v", args, res.Exit)
	}
	s.wall = time.Since(start).Seconds()
	s.selfCPU = cpu(usage(syscall.RUSAGE_SELF)) - cpu(self)
	after := usage(syscall.RUSAGE_CHILDREN)
	s.cmdCPU = cpu(after) - cpu(children)
	s.rss = after.Maxrss // the largest of the children so far
	return s, nil
}

// usage returns the resource usage of who.
func usage(who int) syscall.Rusage {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return ru
}

// cpu returns the user+sys time of ru, in seconds.
func cpu(ru syscall.Rusage) float64 {
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func median(s []sample, f func(sample) float64) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
