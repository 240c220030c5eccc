package folded

import (
	"math/rand/v2"

	"github.com/google/pprof/profile"
)

// testProfile returns a small native + JIT profile with the given sample
// types; every sample's values are drawn from a seeded generator, so the
// profile is the same on every run. One sample has no locations, one is
// a second sample of an existing stack, and one has value 0 everywhere.
//
// Call graph (leaf last):
//
//	main -> Worker::run -> helper (inlined, two call sites)
//	main -> Worker::run -> push_back [-> malloc]
//	main -> Worker::run -> kern::saxpy (JIT) [-> unsymbolized libc]
func testProfile(types ...*profile.ValueType) *profile.Profile {
	app := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, File: "/usr/bin/app", HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
	libc := &profile.Mapping{ID: 2, Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "/lib/x86_64-linux-gnu/libc.so.6"}
	jit := &profile.Mapping{ID: 3, Start: 0, Limit: ^uint64(0), File: "/tmp/jit/module.elf", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	fn := func(id uint64, name, file string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: file}
	}
	fMain := fn(1, "main", "/src/app/main.cc")
	fRun := fn(2, "app::Worker::run()", "/src/app/worker.cc")
	fHelper := fn(3, "app::helper(int)", "/src/app/./worker.h")
	fPush := fn(4, "std::vector<int, std::allocator<int> >::push_back(int const&)", "/usr/include/c++/12/bits/stl_vector.h")
	fSaxpy := fn(5, "kern::saxpy(float*, int)", "/jit/kernel.cc")
	fMalloc := fn(6, "malloc", "")
	loc := func(id, addr uint64, m *profile.Mapping, lines ...profile.Line) *profile.Location {
		return &profile.Location{ID: id, Address: addr, Mapping: m, Line: lines}
	}
	lMain := loc(1, 0x401000, app, profile.Line{Function: fMain, Line: 10})
	lHelper1 := loc(2, 0x401100, app, profile.Line{Function: fHelper, Line: 5}, profile.Line{Function: fRun, Line: 20})
	lRun := loc(3, 0x401200, app, profile.Line{Function: fRun, Line: 25, Column: 7})
	lPush := loc(4, 0x401300, app, profile.Line{Function: fPush, Line: 1200})
	lSaxpy := loc(5, 0x7fff00001000, jit, profile.Line{Function: fSaxpy, Line: 7})
	lLibc := loc(6, 0x7f0000001234, libc)
	lMalloc := loc(7, 0x7f0000002000, libc, profile.Line{Function: fMalloc})
	lHelper2 := loc(8, 0x401104, app, profile.Line{Function: fHelper, Line: 6}, profile.Line{Function: fRun, Line: 20})

	p := &profile.Profile{
		SampleType: types,
		Mapping:    []*profile.Mapping{app, libc, jit},
		Location:   []*profile.Location{lMain, lHelper1, lRun, lPush, lSaxpy, lLibc, lMalloc, lHelper2},
		Function:   []*profile.Function{fMain, fRun, fHelper, fPush, fSaxpy, fMalloc},
		Period:     1,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	values := func() []int64 {
		v := make([]int64, len(types))
		for i := range v {
			v[i] = rng.Int64N(1 << 20)
		}
		return v
	}
	for _, locs := range [][]*profile.Location{
		{lHelper1, lMain},
		{lHelper2, lMain},
		{lPush, lRun, lMain},
		{lMalloc, lPush, lRun, lMain},
		{lSaxpy, lRun, lMain},
		{lLibc, lSaxpy, lRun, lMain},
		{lMain},
		{},
		{lPush, lRun, lMain}, // Same stack as the third sample.
	} {
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: values()})
	}
	p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{lRun, lMain}, Value: make([]int64, len(types))})
	return p
}

// heap2Types returns the sample types of a gperftools heap profile.
func heap2Types() []*profile.ValueType {
	return []*profile.ValueType{{Type: "objects", Unit: "count"}, {Type: "space", Unit: "bytes"}}
}

// heap4Types returns the sample types of a gperftools heap profile with
// allocation and in-use values.
func heap4Types() []*profile.ValueType {
	return []*profile.ValueType{
		{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
		{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
	}
}
