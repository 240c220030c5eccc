package profile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/pprof/profile"
)

// benchObjects returns objects with n sections in total, spread over
// several objects, scattered over 5 GiB with holes, and a profile of m
// locations, half of them in JIT sections.
func benchObjects(n, m int) ([]*Object, *profile.Profile) {
	rng := rand.New(rand.NewPCG(1, 2))
	const perObject = 5000
	var objs []*Object
	addr := uint64(0x7f0000000000)
	var secs []Section
	for i := 0; i < n; i++ {
		if i%perObject == 0 {
			objs = append(objs, &Object{Path: fmt.Sprintf("/jit/obj%03d.elf", len(objs))})
		}
		s := Section{Name: fmt.Sprintf(".text.f%d", i), Start: addr, Size: 16 + rng.Uint64N(2000)}
		o := objs[len(objs)-1]
		o.Sections = append(o.Sections, s)
		secs = append(secs, s)
		addr = s.Limit() + rng.Uint64N(200000)
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	for i := 0; i < m; i++ {
		a := 0x7f0000000000 + rng.Uint64N(addr-0x7f0000000000)
		if i%2 == 0 {
			s := secs[rng.IntN(len(secs))]
			a = s.Start + rng.Uint64N(s.Size)
		}
		l := &profile.Location{ID: uint64(i + 1), Address: a}
		p.Location = append(p.Location, l)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1}})
	}
	return objs, p
}

// BenchmarkExtend50kx50k indexes 50,000 sections and attaches 50,000
// locations: the stage's whole cost for a large JIT host. O((S+L) log S).
func BenchmarkExtend50kx50k(b *testing.B) {
	objs, p := benchObjects(50000, 50000)
	b.ReportAllocs()
	for b.Loop() {
		set, _ := NewObjectSet(objs)
		for _, l := range p.Location {
			l.Mapping = nil
		}
		p.Mapping = nil
		res, err := Extend(p, nil, set)
		if err != nil || len(res.JIT) == 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkLookup is one address lookup among 50,000 sections.
func BenchmarkLookup(b *testing.B) {
	objs, p := benchObjects(50000, 1024)
	set, _ := NewObjectSet(objs)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		set.Lookup(p.Location[i&1023].Address)
		i++
	}
}

// BenchmarkLinearScan50kx50k is the baseline the index replaces: the
// straightforward loop, every location against every section.
func BenchmarkLinearScan50kx50k(b *testing.B) {
	objs, p := benchObjects(50000, 50000)
	for b.Loop() {
		found := 0
		for _, l := range p.Location {
		objects:
			for _, o := range objs {
				for _, s := range o.Sections {
					if s.Contains(l.Address) {
						found++
						break objects
					}
				}
			}
		}
		if found == 0 {
			b.Fatal("no location found")
		}
	}
}

// BenchmarkScan50k is the quick scan (see Hint) of an encoded profile of
// 50,000 locations, samples and addresses in one [0, ^0) mapping named
// after a JIT object, as bench/jitsym.sh's profile: the time before the
// objects it names start being read.
func BenchmarkScan50k(b *testing.B) {
	_, p := benchObjects(1, 50000)
	m := &profile.Mapping{ID: 1, Limit: ^uint64(0), File: "/jit/synth.elf"}
	p.Mapping = []*profile.Mapping{m}
	for _, l := range p.Location {
		l.Mapping = m
	}
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if h, ok := scan(buf.Bytes()); !ok || len(h.Mappings) != 1 {
			b.Fatal("scan found no mapping")
		}
	}
}

// BenchmarkNameFrame: the frame of a code name, for the names of V8
// (JavaScript and WebAssembly), the JVM, PHP and a native symbol, in
// turn: a perf map's or jitdump's every symbolized address costs one.
func BenchmarkNameFrame(b *testing.B) {
	names := []string{
		"JS:*function_number_17 /srv/app/lib/module_3.js:120:7",
		"JS:hash_loop-1-turbofan",
		"Ljava/util/HashMap;::getNode",
		"int App.hot(int[])",
		"TRACE-3$fib$13",
		"_ZN4llvm12PassRegistry15getPassRegistryEv",
	}
	for i := 0; b.Loop(); i++ {
		NameFrame(names[i%len(names)])
	}
}
