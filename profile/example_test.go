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
	// workload.c-1346edd604499fbd.elf: [0x0, 0xffffffffffffffff) offset 0x0, 40 locations
	// workload.c-df2284e66d575719.elf: [0x0, 0xffffffffffffffff) offset 0x0, 54 locations
}

// A run's JIT objects, read once into a Cache and shared by the stage and
// the symbolizer: the frames of a JIT address, from the DWARF of the LLVM
// dump that holds it (here record_less, inlined into jit_sort_records).
func ExampleCache() {
	cache := profile.NewCache(profile.CacheOptions{})
	defer cache.Close()
	objs, _ := cache.Load([]string{"../testdata/mcjit/golden/jit"}, nil)
	addr := uint64(0x4ffffffffa00)
	obj, sec := objs.Lookup(addr)
	frames, err := obj.FrameSource()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, section %s:\n", filepath.Base(obj.Path), sec.Name)
	for _, f := range frames.Frames(addr) {
		fmt.Printf("  %s %s:%d\n", f.Func, filepath.Base(f.File), f.Line)
	}
	// Output:
	// workload.c-df2284e66d575719.elf, section .text.jit_sort_records:
	//   record_less workload.c:174
	//   jit_sort_records workload.c:193
}
