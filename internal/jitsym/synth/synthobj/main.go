// Command synthobj writes a synthetic JIT object dump for benchmarks: a
// g++ -g -O1 -ffunction-sections object of many small C++ functions whose
// sections have scattered load addresses. It prints the object's path.
// With -exe it writes a native executable of the same functions instead
// (g++ -g -O1 -no-pie), for the native symbolization benchmark, of
// -units compile units.
//
// Usage:
//
//	synthobj [-exe [-units units]] [-n functions] [-dir directory]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/jitpprof/pprof/internal/jitsym/synth"
)

func main() {
	n := flag.Int("n", 40000, "number of functions")
	dir := flag.String("dir", ".", "directory for synth.cc, synth.o and synth.elf")
	exe := flag.Bool("exe", false, "write an executable, synth-exe, instead of a JIT object")
	units := flag.Int("units", 1, "with -exe, the number of compile units")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	generate := synth.Generate
	if *exe {
		generate = func(dir string, n int) (string, error) { return synth.GenerateExeUnits(dir, n, *units) }
	}
	path, err := generate(*dir, *n)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(path)
}
