package profile

import (
	"reflect"
	"testing"

	"github.com/google/pprof/profile"
)

// TestSourcesGroup checks how each kind picks its files out of a
// directory listing.
func TestSourcesGroup(t *testing.T) {
	names := []string{"b.meta", "a.elf", "b.elf", "c.meta", "perf-12.map", "perf.map", "jit-9.dump", "jit-9.dump.tmp", "notes.txt", "a.elf.bak"}
	want := map[Kind][][]string{
		LLVMDump: {{"b.elf", "b.meta"}, {"a.elf"}, {"c.meta"}},
		PerfMap:  {{"perf-12.map"}},
		JITDump:  {{"jit-9.dump"}},
	}
	for _, s := range Sources() {
		if SourceOf(s.Kind()) != s {
			t.Errorf("SourceOf(%v) is not %T", s.Kind(), s)
		}
		if got := s.Group(names); !reflect.DeepEqual(got, want[s.Kind()]) {
			t.Errorf("%v: Group = %q, want %q", s.Kind(), got, want[s.Kind()])
		}
	}
}

// TestIsJITMapping: the stage's [0, ^0) mappings of any kind, nothing else.
func TestIsJITMapping(t *testing.T) {
	for _, tc := range []struct {
		m    *profile.Mapping
		want bool
	}{
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/x.elf"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/perf-1.map"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/jit-1.dump"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/x.meta"}, false},
		{&profile.Mapping{Start: 0x400000, Limit: 0x500000, File: "/d/x.elf"}, false},
		{&profile.Mapping{Limit: ^uint64(0), File: "/usr/lib/libc.so.6"}, false},
		{&profile.Mapping{Limit: ^uint64(0)}, false},
		{nil, false},
	} {
		if got := IsJITMapping(tc.m); got != tc.want {
			t.Errorf("IsJITMapping(%+v) = %v, want %v", tc.m, got, tc.want)
		}
	}
}
