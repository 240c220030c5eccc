package profile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// heapProfile is a gperftools heap profile whose memory map has JIT code
// in an anonymous region [0x1000, 0x3000) right below libfoo.so, more JIT
// code above libfoo.so, and an anonymous region with no JIT object.
// Addresses of non-leaf frames are one past a call: pprof subtracts 1.
const heapProfile = `heap profile:    5:      500 [     5:      500] @ heapprofile
     1:      100 [     1:      100] @ 0x1501 0x400101
     1:      100 [     1:      100] @ 0x4101 0x3501 0x400101
     1:      100 [     1:      100] @ 0x1801 0x400101
     1:      100 [     1:      100] @ 0x2801 0x400101
     1:      100 [     1:      100] @ 0x9001 0x400101
MAPPED_LIBRARIES:
00400000-00401000 r-xp 00000000 08:01 42 /bin/server
00401000-00402000 rw-p 00001000 08:01 42 /bin/server
00001000-00003000 r-xp 00000000 00:00 0
00003000-00004000 r-xp 00000000 08:01 1234 /lib/libfoo.so
00004000-00005000 r-xp 00000000 00:00 0
00007000-00008000 r-xp 00000000 00:00 0
`

func jitObjects(t *testing.T) (*ObjectSet, *Object) {
	t.Helper()
	obj := &Object{Path: "/jit/mod.elf", Sections: []Section{
		{Name: ".text.f", Start: 0x1400, Size: 0x200},
		{Name: ".text.g", Start: 0x2800, Size: 0x100},
		{Name: ".text.h", Start: 0x4000, Size: 0x200},
	}}
	set, errs := NewObjectSet([]*Object{obj})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	return set, obj
}

// mappingOf describes the mapping of the location at addr.
func mappingOf(p *profile.Profile, addr uint64) string {
	for _, l := range p.Location {
		if l.Address == addr {
			m := l.Mapping
			if m == nil {
				return "<nil>"
			}
			return fmt.Sprintf("%d:%s[%#x,%#x)+%#x", m.ID, m.File, m.Start, m.Limit, m.Offset)
		}
	}
	return "<no location>"
}

func TestExtendLegacy(t *testing.T) {
	set, obj := jitObjects(t)
	data := []byte(heapProfile)
	upstream, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	// The bug being fixed: upstream merges the anonymous JIT region into
	// libfoo.so and moves its start down to the JIT region.
	if got, want := mappingOf(upstream, 0x1500), "2:/lib/libfoo.so[0x1000,0x5000)+0x0"; got != want {
		t.Fatalf("upstream maps the JIT address to %s, want %s (has upstream changed?)", got, want)
	}

	p, _ := profile.ParseData(data)
	res, err := Extend(p, legacyMemoryMap(data), set)
	if err != nil {
		t.Fatal(err)
	}
	jit := "7:/jit/mod.elf[0x0,0xffffffffffffffff)+0x0"
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{addr: 0x400100, want: "1:/bin/server[0x400000,0x401000)+0x0"},
		{addr: 0x1500, want: jit},                                   // JIT section below libfoo.so
		{addr: 0x2800, want: jit},                                   // leaf frame: not adjusted
		{addr: 0x3500, want: "3:/lib/libfoo.so[0x3000,0x4000)+0x0"}, // base unmoved
		{addr: 0x4100, want: jit},                                   // JIT section above libfoo.so
		{addr: 0x1800, want: "2:[0x1000,0x3000)+0x0"},               // anonymous, no JIT section
		{addr: 0x9000, want: "6:[0x0,0xffffffffffffffff)+0x0"},      // unmapped: catch-all
	} {
		if got := mappingOf(p, tc.addr); got != tc.want {
			t.Errorf("location %#x: mapping %s, want %s", tc.addr, got, tc.want)
		}
	}
	if len(res.JIT) != 1 || res.JIT[0].Object != obj || len(res.JIT[0].Locations) != 3 || !res.Rebuilt || res.Conflicts != 0 {
		t.Errorf("Extend result = %+v, want one JIT mapping of %s with 3 locations, rebuilt, no conflict", res, obj.Path)
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("profile invalid after Extend: %v", err)
	}
}

// TestExtendNamedAnonymousMemory: JIT code in anonymous memory that
// /proc/PID/maps gives a name (PHP's opcache in shared memory, a region
// named with PR_SET_VMA_ANON_NAME, a memfd a runtime maps twice) is
// attached to its perf map's mapping, as in unnamed memory; a file's
// code stays the file's.
func TestExtendNamedAnonymousMemory(t *testing.T) {
	data := []byte(`heap profile:    4:      400 [     4:      400] @ heapprofile
     1:      100 [     1:      100] @ 0x1501 0x400101
     1:      100 [     1:      100] @ 0x3501 0x400101
     1:      100 [     1:      100] @ 0x5501 0x400101
     1:      100 [     1:      100] @ 0x7501 0x400101
MAPPED_LIBRARIES:
00400000-00401000 r-xp 00000000 08:01 42 /bin/server
00001000-00002000 r-xs 00000000 00:01 1028 /dev/zero (deleted)
00003000-00004000 r-xp 00000000 00:00 0 [anon:jit code]
00005000-00006000 r-xp 00000000 00:01 7 /memfd:doublemapper (deleted)
00007000-00008000 r-xp 00000000 08:01 1234 /lib/libfoo.so
`)
	obj := &Object{Kind: PerfMap, Path: "/tmp/perf-7.map", Sections: []Section{
		{Start: 0x1400, Size: 0x200}, {Start: 0x3400, Size: 0x200}, {Start: 0x5400, Size: 0x200}, {Start: 0x7400, Size: 0x200},
	}}
	set, errs := NewObjectSet([]*Object{obj})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extend(p, legacyMemoryMap(data), set); err != nil {
		t.Fatal(err)
	}
	jit := "6:/tmp/perf-7.map[0x0,0xffffffffffffffff)+0x0"
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{addr: 0x1500, want: jit},
		{addr: 0x3500, want: jit},
		{addr: 0x5500, want: jit},
		{addr: 0x7500, want: "5:/lib/libfoo.so[0x7000,0x8000)+0x0"},
	} {
		if got := mappingOf(p, tc.addr); got != tc.want {
			t.Errorf("location %#x: mapping %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestExtendProto(t *testing.T) {
	set, _ := jitObjects(t)
	libc := &profile.Mapping{ID: 1, Start: 0x2000, Limit: 0x3000, File: "/lib/libc.so.6"}
	fn := &profile.Function{ID: 1, Name: "known"}
	locs := []*profile.Location{
		{ID: 1, Address: 0x1500},                                       // JIT, no mapping (Go drops anonymous ones)
		{ID: 2, Address: 0x2880, Mapping: libc},                        // in a JIT section and in libc: conflict
		{ID: 3, Address: 0x4100, Line: []profile.Line{{Function: fn}}}, // already symbolized
		{ID: 4, Address: 0x9000},                                       // nothing
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Location: locs, Value: []int64{1}}},
		Location:   locs,
		Mapping:    []*profile.Mapping{libc},
		Function:   []*profile.Function{fn},
	}
	res, err := Extend(p, nil, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{addr: 0x1500, want: "2:/jit/mod.elf[0x0,0xffffffffffffffff)+0x0"},
		{addr: 0x2880, want: "1:/lib/libc.so.6[0x2000,0x3000)+0x0"},
		{addr: 0x4100, want: "<nil>"},
		{addr: 0x9000, want: "<nil>"},
	} {
		if got := mappingOf(p, tc.addr); got != tc.want {
			t.Errorf("location %#x: mapping %s, want %s", tc.addr, got, tc.want)
		}
	}
	if res.Conflicts != 1 || res.Rebuilt {
		t.Errorf("Extend result = %+v, want 1 conflict, not rebuilt", res)
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("profile invalid after Extend: %v", err)
	}
}

func TestExtendProtoWithoutMappings(t *testing.T) {
	set, _ := jitObjects(t)
	locs := []*profile.Location{{ID: 1, Address: 0x1500}, {ID: 2, Address: 0x9000}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Location: locs, Value: []int64{1}}},
		Location:   locs,
	}
	if _, err := Extend(p, nil, set); err != nil {
		t.Fatal(err)
	}
	// The JIT mapping must not become mapping 1, which pprof takes for the
	// main binary: the placeholder pprof would add comes first.
	if got, want := mappingOf(p, 0x9000), "1:[0x0,0x0)+0x0"; got != want {
		t.Errorf("non-JIT location: mapping %s, want %s", got, want)
	}
	if got, want := mappingOf(p, 0x1500), "2:/jit/mod.elf[0x0,0xffffffffffffffff)+0x0"; got != want {
		t.Errorf("JIT location: mapping %s, want %s", got, want)
	}
}

func TestExtendIsIdempotent(t *testing.T) {
	set, _ := jitObjects(t)
	data := []byte(heapProfile)
	p, _ := profile.ParseData(data)
	if _, err := Extend(p, legacyMemoryMap(data), set); err != nil {
		t.Fatal(err)
	}
	// Written out unsymbolized and read back, as with pprof -proto
	// -symbolize=none: JIT locations sit in a [0, ^0) mapping named after
	// the object, which must not count as a conflict.
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	q, err := profile.ParseData([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Extend(q, nil, set)
	if err != nil {
		t.Fatal(err)
	}
	if res.Conflicts != 0 || len(res.JIT) != 1 || len(res.JIT[0].Locations) != 3 {
		t.Errorf("second Extend = %+v, want the 3 JIT locations attached again and no conflict", res)
	}
}

func TestLegacyMappingsKeepsSplitFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		maps string
		want []string
	}{
		{
			name: "pieces of one file merge",
			maps: "1000-2000 r-xp 00000000 08:01 1 /lib/liba.so\n2000-3000 r-xp 00001000 08:01 1 /lib/liba.so\n",
			want: []string{"/lib/liba.so[0x1000,0x3000)+0x0"},
		},
		{
			name: "offsets that do not continue",
			maps: "1000-2000 r-xp 00001000 08:01 1 /lib/liba.so\n2000-3000 r-xp 00005000 08:01 1 /lib/liba.so\n",
			want: []string{"/lib/liba.so[0x1000,0x2000)+0x1000", "/lib/liba.so[0x2000,0x3000)+0x5000"},
		},
		{
			name: "anonymous below a library",
			maps: "1000-2000 r-xp 00000000 00:00 0\n2000-3000 r-xp 00000000 08:01 1 /lib/liba.so\n",
			want: []string{"[0x1000,0x2000)+0x0", "/lib/liba.so[0x2000,0x3000)+0x0"},
		},
		{
			name: "anonymous above a library",
			maps: "1000-2000 r-xp 00000000 08:01 1 /lib/liba.so\n2000-3000 r-xp 00000000 00:00 0\n",
			want: []string{"/lib/liba.so[0x1000,0x2000)+0x0", "[0x2000,0x3000)+0x0"},
		},
		{
			name: "two anonymous regions merge",
			maps: "1000-2000 r-xp 00000000 00:00 0\n2000-3000 r-xp 00000000 00:00 0\n",
			want: []string{"[0x1000,0x3000)+0x0"},
		},
		{
			name: "main binary first, non-executable skipped",
			maps: "1000-2000 r-xp 00000000 08:01 1 /lib/liba.so\n3000-4000 r--p 00000000 08:01 2 /bin/main\n4000-5000 r-xp 00001000 08:01 2 /bin/main\n",
			want: []string{"/bin/main[0x4000,0x5000)+0x1000", "/lib/liba.so[0x1000,0x2000)+0x0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := legacyMappings([]byte(tc.maps))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, fmt.Sprintf("%s[%#x,%#x)+%#x", m.File, m.Start, m.Limit, m.Offset))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("mappings = %q, want %q", got, tc.want)
			}
		})
	}
}
