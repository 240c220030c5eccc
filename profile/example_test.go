package profile_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/profile"
)

// The stage on its own: load the JIT objects, parse a gperftools CPU
// profile, rebuild its mappings and attach the JIT addresses. The JIT
// mappings are then what pprof's symbolizers expect.
func Example() {
	objs, errs := profile.Load([]string{"../testdata/mcjit/golden/jit"})
	for _, err := range errs {
		log.Print(err)
	}
	data, err := os.ReadFile("../testdata/mcjit/golden/cpu.prof")
	if err != nil {
		log.Fatal(err)
	}
	p, memoryMap, err := profile.Parse(data)
	if err != nil {
		log.Fatal(err)
	}
	res, err := profile.Extend(p, memoryMap, objs)
	if err != nil {
		log.Fatal(err)
	}
	for _, jm := range res.JIT {
		m := jm.Mapping
		fmt.Printf("%s: [%#x, %#x) offset %#x, %d locations\n",
			filepath.Base(m.File), m.Start, m.Limit, m.Offset, len(jm.Locations))
	}
	// Output:
	// workload.c-638f513f71bd93dc.elf: [0x0, 0xffffffffffffffff) offset 0x0, 42 locations
	// workload.c-68e9f90eef0668b4.elf: [0x0, 0xffffffffffffffff) offset 0x0, 57 locations
}
