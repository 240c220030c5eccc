// Command jitsnap copies the JIT-compiled objects of a running process
// into a directory that pprof reads with -jit_dir, without stopping the
// process or changing it in any way.
//
// Usage:
//
//	jitsnap -pid PID [-o DIR]
//
// LLVM's MCJIT (and ORC with RuntimeDyld) registers every object it loads
// with the GDB JIT interface: a list rooted at __jit_debug_descriptor
// whose entries point at an in-memory ELF copy of the object with the
// load addresses in its section headers. jitsnap finds that list in the
// process's memory and saves each object as DIR/NAME.elf with its
// section index DIR/NAME.meta, the same files the jitlistener dump
// listener writes. Objects already in DIR are left alone, so running it
// again adds only what was compiled since. ORC registers objects there
// only with debugger support turned on (see doc/jit-hosts.md); an empty
// list is reported with that cause and its fix.
//
// Exit status: 0 when the snapshot succeeded, 1 on an error (no such
// process, no permission, no JIT interface, no objects, every object
// invalid), 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jitpprof/pprof/internal/jitsnap"
)

const usage = `usage: jitsnap -pid PID [-o DIR]

Copies the JIT objects that process PID registered with LLVM's GDB JIT
interface (__jit_debug_descriptor) into DIR as NAME.elf and NAME.meta, for
pprof -jit_dir DIR. The process is only read, never stopped.

Reading another process needs the same rights as attaching a debugger to
it: the same user (and kernel.yama.ptrace_scope 0), or root/CAP_SYS_PTRACE.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("jitsnap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pid := fs.Int("pid", 0, "process to snapshot (required)")
	dir := fs.String("o", ".", "output directory, created if missing")
	quiet := fs.Bool("q", false, "print only errors and skipped objects")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	// The flag package prints the usage itself on every parse error,
	// -h included; -h must print it once, on standard output, so it is
	// printed here instead.
	printUsage := fs.Usage
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			printUsage()
			return 0
		}
		printUsage()
		return 2
	}
	fs.Usage = printUsage
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "jitsnap: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		fs.Usage()
		return 2
	case *pid <= 0:
		fmt.Fprintln(stderr, "jitsnap: -pid PID is required (a positive process id)")
		fs.Usage()
		return 2
	case *dir == "":
		fmt.Fprintln(stderr, "jitsnap: -o DIR must not be empty")
		return 2
	}

	res, err := jitsnap.Snapshot(*pid, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "jitsnap: %v\n", err)
		return 1
	}
	return report(stdout, stderr, res, *quiet)
}

// report prints what a snapshot did and returns the exit status: 1 if
// the list held entries but none was a valid object.
func report(stdout, stderr io.Writer, res *jitsnap.Result, quiet bool) int {
	if !quiet {
		for _, d := range res.Descriptors {
			fmt.Fprintf(stdout, "pid %d: __jit_debug_descriptor at %#x, __jit_debug_register_code at %#x (%s)\n",
				res.PID, d.Addr, d.RegisterCode, d.Object)
		}
		for _, o := range res.Written {
			fmt.Fprintf(stdout, "wrote %s.elf (%d bytes, %d sections)\n", filepath.Join(res.Dir, o.Name), o.Size, len(o.Sections))
		}
		for _, o := range res.Unchanged {
			fmt.Fprintf(stdout, "unchanged %s.elf\n", filepath.Join(res.Dir, o.Name))
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "jitsnap: pid %d: skipped %v\n", res.PID, s)
	}
	if !quiet {
		fmt.Fprintf(stdout, "pid %d: %d written, %d unchanged, %d skipped in %s\n",
			res.PID, len(res.Written), len(res.Unchanged), len(res.Skipped), res.Dir)
	}
	if len(res.Written)+len(res.Unchanged) == 0 {
		fmt.Fprintf(stderr, "jitsnap: pid %d: no valid JIT object among %d entries\n", res.PID, len(res.Skipped))
		return 1
	}
	return 0
}
