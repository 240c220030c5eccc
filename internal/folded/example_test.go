package folded_test

import (
	"fmt"
	"os"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/folded"
)

// A heap profile with two values per sample: the folded stacks of the
// second, space in bytes, rather than the first.
func Example() {
	fn := func(id uint64, name string) *profile.Function {
		return &profile.Function{ID: id, Name: name}
	}
	mainFn, alloc := fn(1, "main"), fn(2, "std::vector<int>::push_back(int const&)")
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	lMain, lAlloc := loc(1, mainFn), loc(2, alloc)
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "objects", Unit: "count"}, {Type: "space", Unit: "bytes"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lAlloc, lMain}, Value: []int64{3, 4096}},
			{Location: []*profile.Location{lMain}, Value: []int64{1, 512}},
			{Location: []*profile.Location{lAlloc, lMain}, Value: []int64{1, 1024}},
		},
		Location: []*profile.Location{lMain, lAlloc},
		Function: []*profile.Function{mainFn, alloc},
	}
	stacks, err := folded.Stacks(p, folded.Options{SampleIndex: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := folded.Write(os.Stdout, stacks); err != nil {
		fmt.Println(err)
	}
	// Output:
	// main 512
	// main;std::vector<int>::push_back(int const&) 5120
}
