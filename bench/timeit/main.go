// Command timeit runs a command, as GNU time does, and writes its wall
// time in seconds, to the millisecond, and its peak resident set size in
// KiB to a file, as "SECONDS KIB". GNU time gives the wall time to the
// hundredth of a second only, too coarse for the 0.1 s commands the
// benchmark scripts compare. The peak RSS is the kernel's for the command
// and the children it waited for (wait4's ru_maxrss), as GNU time's %M.
// With -cpu, a third field is the CPU time, user and system, of the
// command and the children it waited for, in seconds ("SECONDS KIB
// CPU_SECONDS").
//
// Usage:
//
//	timeit [-cpu] -o FILE COMMAND [ARG...]
//
// The command's standard streams are timeit's; its exit status is
// timeit's too.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("timeit: ")
	out := flag.String("o", "", `file to write "SECONDS MAX_RSS_KIB" to`)
	withCPU := flag.Bool("cpu", false, "write the CPU time (user+sys) in seconds third")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		log.Fatal(err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		log.Fatal("no resource usage for the command")
	}
	line := fmt.Sprintf("%.3f %d", wall.Seconds(), ru.Maxrss)
	if *withCPU {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		line += fmt.Sprintf(" %.3f", cpu.Seconds())
	}
	if err := os.WriteFile(*out, []byte(line+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
