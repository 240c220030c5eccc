// Command pprof is jitpprof: Google's pprof, with JIT-compiled code
// symbolized. It reads and writes everything upstream pprof does, takes
// the same flags, plus -jit_dir and -jit_symbolizer; see the README.
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
