// Command pprof is jitpprof: Google's pprof, with JIT-compiled code
// symbolized. It reads and writes everything upstream pprof does (and
// perf.data itself), takes the same flags, and adds: -jit_dir,
// -jit_symbolizer, -jit_pid and -jit_any_owner (JIT sources: LLVM dumps,
// perf maps, jitdumps, a live process), -objtool and -asm_syntax (the
// in-process object tool or binutils, and its disassembly's syntax),
// -max_profile_mb, -max_perf_mb and -max_debug_mb (limits on what inputs
// decompress to), -folded (-collapsed), -flamegraph and
// -flamegraph_title, and -record, which records a command or running
// processes (Linux perf events, in process) and reports on the
// recording. See the README and doc/guide.md.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/jitpprof/pprof/driver"
	"github.com/jitpprof/pprof/internal/readlineui"
)

func main() {
	opts := &driver.Options{}
	if ui, err := readlineui.New(); err == nil {
		opts.UI = ui
	} else {
		fmt.Fprintf(os.Stderr, "readline: %v\n", err)
	}
	if err := driver.PProf(opts); err != nil {
		var exit *driver.ExitError
		if errors.As(err, &exit) {
			// The status of the command -record ran, or a shell's
			// for one that could not be started.
			if exit.Err != nil {
				fmt.Fprintf(os.Stderr, "pprof: %v\n", exit.Err)
			}
			os.Exit(exit.Status)
		}
		fmt.Fprintf(os.Stderr, "pprof: %v\n", err)
		os.Exit(2)
	}
}
