// Command synthprof writes a CPU profile of a synthetic JIT object for
// the symbolization benchmark (bench/jitsym.sh): n distinct addresses
// spread over the object's executable sections, attached to one mapping
// with Start 0, Limit ^uint64(0) and Offset 0, named after the object.
// That is the scheme by which upstream pprof can read a JIT object: pprof's
// binutils then compute a base of 0 and hand absolute addresses to
// llvm-symbolizer or addr2line, one process for the whole object.
//
// With -anon, the mapping is anonymous instead (no file, over the range
// of the addresses), as JIT code is in the profile of a process that
// embeds the JIT: only jitpprof's JIT stage can find its object.
//
// With -native, obj is an executable instead, mapped at its code
// segment as a process maps it (bench/native.sh).
//
// Usage:
//
//	synthprof [-native | -anon] -obj synth.elf -n 50000 -o profile.pb.gz
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/elfrel"
)

func main() {
	obj := flag.String("obj", "", "the JIT object (ET_REL with load addresses)")
	n := flag.Int("n", 50000, "number of distinct addresses")
	out := flag.String("o", "profile.pb.gz", "output profile")
	seed := flag.Uint64("seed", 1, "seed of the address choice")
	addrsOut := flag.String("addrs", "", "also write the addresses, file addresses in hex one per line, to this file (for llvm-symbolizer)")
	native := flag.Bool("native", false, "obj is an executable (ET_EXEC): map its code segment as the process did, not [0, ^0)")
	anon := flag.Bool("anon", false, "make the mapping anonymous, over the range of the addresses, not [0, ^0) named after the object")
	flag.Parse()
	if *obj == "" || flag.NArg() != 0 || *native && *anon {
		flag.Usage()
		os.Exit(2)
	}
	p, err := build(*obj, *n, *seed, *native)
	if err != nil {
		log.Fatal(err)
	}
	if *anon {
		m := p.Mapping[0]
		m.File, m.Start, m.Limit = "", ^uint64(0), 0
		for _, l := range p.Location {
			m.Start, m.Limit = min(m.Start, l.Address), max(m.Limit, l.Address+1)
		}
	}
	if *addrsOut != "" {
		var b strings.Builder
		for _, l := range p.Location {
			// The executable is not PIE and the JIT object's mapping is
			// [0, ^0): either way the file's addresses are the run-time ones.
			fmt.Fprintf(&b, "%#x\n", l.Address)
		}
		if err := os.WriteFile(*addrsOut, []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// build returns a profile with n distinct addresses of obj's executable
// sections, chosen uniformly over their bytes, one sample each.
func build(obj string, n int, seed uint64, native bool) (*profile.Profile, error) {
	abs, err := filepath.Abs(obj)
	if err != nil {
		return nil, err
	}
	f, err := elfrel.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type span struct{ start, size uint64 }
	var code []span
	var total uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr != 0 && s.Size != 0 {
			code = append(code, span{s.Addr, s.Size})
			total += s.Size
		}
	}
	if total < uint64(n) {
		return nil, fmt.Errorf("%s has %d bytes of code, fewer than %d addresses", obj, total, n)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	m := &profile.Mapping{ID: 1, Limit: ^uint64(0), File: abs}
	if native {
		// The executable segment as the loader maps it: page-aligned
		// start and offset, the way a process's memory map shows it.
		var text *elf.ProgHeader
		for i, ph := range f.Progs {
			if ph.Type == elf.PT_LOAD && ph.Flags&elf.PF_X != 0 {
				text = &f.Progs[i]
				break
			}
		}
		if text == nil {
			return nil, fmt.Errorf("%s has no executable PT_LOAD segment", obj)
		}
		const page = 4096
		m.Start = text.Vaddr &^ (page - 1)
		m.Limit = (text.Vaddr + text.Memsz + page - 1) &^ (page - 1)
		m.Offset = text.Off &^ (page - 1)
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
		Mapping:    []*profile.Mapping{m},
	}
	seen := map[uint64]bool{}
	for len(p.Location) < n {
		off := rng.Uint64N(total)
		var addr uint64
		for _, c := range code {
			if off < c.size {
				addr = c.start + off
				break
			}
			off -= c.size
		}
		if seen[addr] {
			continue
		}
		seen[addr] = true
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr, Mapping: m}
		p.Location = append(p.Location, l)
		count := 1 + rng.Int64N(20)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{count, count * p.Period}})
	}
	return p, p.CheckValid()
}
