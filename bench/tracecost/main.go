// Command tracecost measures what holding a command at its exit costs
// (jitsnap's Tracer): it runs a command RUNS times plainly and RUNS
// times under a Tracer, alternating, and prints per mode the median wall
// time, the median CPU time of the command (user+sys, its children
// included), the median CPU time of the tracing process itself, the
// peak RSS, and for the traced runs the ptrace stops and the time the
// command was held at its exit for the snapshot.
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
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/jitpprof/pprof/internal/jitsnap"
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
	fmt.Printf("%-12s %-7s %9s %9s %9s %9s %7s %9s\n", "workload", "mode", "wall_s", "cmd_cpu_s", "self_cpu_s", "rss_kib", "stops", "held_s")
	for _, m := range []struct {
		mode string
		s    []sample
	}{{"plain", plain}, {"traced", traced}} {
		fmt.Printf("%-12s %-7s %9.3f %9.3f %9.3f %9d %7d %9.3f\n", name, m.mode,
			median(m.s, func(s sample) float64 { return s.wall }),
			median(m.s, func(s sample) float64 { return s.cmdCPU }),
			median(m.s, func(s sample) float64 { return s.selfCPU }),
			int64(median(m.s, func(s sample) float64 { return float64(s.rss) })),
			int(median(m.s, func(s sample) float64 { return float64(s.stops) })),
			median(m.s, func(s sample) float64 { return s.held }))
	}
}

// A sample is one run.
type sample struct {
	wall, cmdCPU, selfCPU, held float64 // seconds
	rss                         int64   // KiB
	stops                       int
}

// measure runs args once, traced with snapshots into dir unless dir is
// "".
func measure(args []string, dir string) (sample, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	before := selfCPU()
	start := time.Now()
	var s sample
	if dir == "" {
		if err := cmd.Run(); err != nil {
			return s, fmt.Errorf("%q: %w", args, err)
		}
	} else {
		tr, err := jitsnap.StartTraced(cmd, dir)
		if err != nil {
			return s, err
		}
		ex, err := tr.Wait()
		if err != nil {
			return s, fmt.Errorf("%q traced: %w", args, err)
		}
		s.stops, s.held = ex.Stops, ex.Held.Seconds()
	}
	s.wall = time.Since(start).Seconds()
	s.selfCPU = selfCPU() - before
	st := cmd.ProcessState
	s.cmdCPU = (st.UserTime() + st.SystemTime()).Seconds()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		s.rss = ru.Maxrss
	}
	return s, nil
}

// selfCPU returns this process's user+sys time, its children excluded.
func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
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
