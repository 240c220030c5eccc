package driver_test

import (
	"flag"
	"fmt"
	"log"

	"github.com/jitpprof/pprof/driver"
)

// Running pprof from a program: the options are upstream pprof's, plus the
// JIT ones. Here the command line is given explicitly, and the JIT
// objects come from Options.JITDirs rather than -jit_dir.
func ExamplePProf() {
	// The explicit -sample_index and -output matter only when the program
	// has run PProf before: upstream keeps such settings between calls.
	args := []string{"-top", "-sample_index=cpu", "-output=", "-show=jit_poly|horner", "../testdata/mcjit/golden/cpu.prof"}
	err := driver.PProf(&driver.Options{
		Flagset: driver.NewFlagSet("pprof", args, flag.ContinueOnError),
		JITDirs: []string{"../testdata/mcjit/golden/jit"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// File: jit_host
	// Type: cpu
	// Active filters:
	//    show=jit_poly|horner
	// Showing nodes accounting for 1.33s, 18.74% of 7.11s total
	//       flat  flat%   sum%        cum   cum%
	//      1.29s 18.12% 18.12%      1.29s 18.12%  horner (inline)
	//      0.04s  0.62% 18.74%      1.33s 18.74%  jit_poly
}

// A flag defined with StringList may be repeated; each occurrence adds a
// value.
func ExampleNewFlagSet() {
	fs := driver.NewFlagSet("pprof", []string{"-base", "a.prof", "-base", "b.prof", "c.prof"}, flag.ContinueOnError)
	bases := fs.StringList("base", "", "base profiles")
	args := fs.Parse(func() {})
	for _, b := range *bases {
		fmt.Println("base:", *b)
	}
	fmt.Println("sources:", args)
	// Output:
	// base: a.prof
	// base: b.prof
	// sources: [c.prof]
}
