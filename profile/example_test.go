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
// the symbolizer: the JIT addresses of a gperftools CPU profile of an LLVM
// MCJIT host, named from the DWARF of the host's JIT objects.
func ExampleCache() {
	cache := profile.NewCache(profile.CacheOptions{})
	defer cache.Close()
	objs, _ := cache.Load([]string{"../testdata/mcjit/golden/jit"}, nil)
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
	names := map[string]bool{}
	for _, jm := range res.JIT {
		frames, err := jm.Object.FrameSource()
		if err != nil {
			log.Fatal(err)
		}
		for _, l := range jm.Locations {
			for _, f := range frames.Frames(l.Address) {
				names[fmt.Sprintf("%s %s", f.Func, filepath.Base(f.File))] = true
			}
		}
	}
	fmt.Println(names["jit_sort_records workload.c"], names["horner workload.c"], names["jit_tree_sum workload.c"])
	// Output: true true true
}
