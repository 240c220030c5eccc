// Command synthobj writes a synthetic JIT object dump for benchmarks: a
// g++ -g -O1 -ffunction-sections object of many small C++ functions whose
// sections have scattered load addresses. It prints the object's path.
//
// Usage:
//
//	synthobj [-n functions] [-dir directory]
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
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	path, err := synth.Generate(*dir, *n)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(path)
}
