// Command pprof is jitpprof: Google's pprof, with JIT-compiled code
// symbolized. It reads and writes everything upstream pprof does (and
// perf.data itself), takes the same flags, and adds: -jit_dir,
// -jit_symbolizer, -jit_pid and -jit_any_owner (JIT sources: LLVM dumps,
// perf maps, jitdumps, a live process), -objtool (in-process object tool
// or binutils), -max_profile_mb and -max_perf_mb (the decompressed-profile
// and perf.data limits), -folded (-collapsed), -flamegraph and
// -flamegraph_title. See the README and doc/guide.md.
package main

import (
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
		fmt.Fprintf(os.Stderr, "pprof: %v\n", err)
		os.Exit(2)
	}
}
