package profile

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"slices"
	"testing"

	"github.com/google/pprof/profile"
)

// referenced returns the mappings of p that a location refers to, by ID
// (of two mappings with one ID, upstream's decoder links the locations
// to the last; both are referred to by ID).
func referenced(p *profile.Profile) []*profile.Mapping {
	ids := map[uint64]bool{}
	for _, l := range p.Location {
		if l.Mapping != nil {
			ids[l.Mapping.ID] = true
		}
	}
	var ms []*profile.Mapping
	for _, m := range p.Mapping {
		if ids[m.ID] {
			ms = append(ms, m)
		}
	}
	return ms
}

// mappingKeys returns what scanMappings promises of each mapping.
func mappingKeys(ms []*profile.Mapping) []string {
	var keys []string
	for _, m := range ms {
		keys = append(keys, fmt.Sprintf("%q f=%v fn=%v l=%v i=%v", m.File, m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames))
	}
	return keys
}

// jitCandidates returns the addresses of the locations of p that only a
// JIT object can symbolize, which the scan promises.
func jitCandidates(p *profile.Profile) []uint64 {
	var addrs []uint64
	for _, l := range p.Location {
		if l.Address != 0 && len(l.Line) == 0 && (l.Mapping == nil || l.Mapping.File == "") {
			addrs = append(addrs, l.Address)
		}
	}
	return addrs
}

// hintSeeds are encoded profiles: real ones from the repository and small
// ones with the flags and files scanMappings reads.
func hintSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	// A real profile with the mappings of a real process: this one's.
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	data, err := decompress(heap.Bytes(), DefaultMaxDecompressed)
	if err != nil {
		t.Fatal(err)
	}
	seeds["runtime/pprof heap"] = data
	fn := &profile.Function{ID: 1, Name: "main", Filename: "main.c"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping: []*profile.Mapping{
			{ID: 1, Start: 0x400000, Limit: 0x500000, File: "/usr/bin/server", BuildID: "abc"},
			{ID: 2, Start: 0x7f0000000000, Limit: 0x7f0000100000, Offset: 0x1000, File: "/lib/libc.so.6", HasFunctions: true, HasFilenames: true},
			{ID: 3, Start: 0x7f1000000000, Limit: 0x7f1000001000, File: "[vdso]", HasLineNumbers: true, HasInlineFrames: true},
			{ID: 4, Start: 0x7f2000000000, Limit: 0x7f2000001000},
		},
		Function: []*profile.Function{fn},
	}
	p.Location = []*profile.Location{{ID: 1, Mapping: p.Mapping[0], Address: 0x401000, Line: []profile.Line{{Function: fn, Line: 3}}}}
	p.Sample = []*profile.Sample{{Location: p.Location, Value: []int64{1}}}
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	seeds["four mappings"] = buf.Bytes()
	// JIT code: addresses in an anonymous mapping and in no mapping, and,
	// not candidates, in a [0, ^0) mapping named after a JIT object, in a
	// file's mapping, at address 0 and with a line already.
	anon := &profile.Mapping{ID: 1, Start: 0x7f0000000000, Limit: 0x7f0000100000}
	dump := &profile.Mapping{ID: 2, Limit: ^uint64(0), File: "/jit/a.elf"}
	lib := &profile.Mapping{ID: 3, Start: 0x7f1000000000, Limit: 0x7f1000100000, File: "/lib/libc.so.6"}
	p = &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{anon, dump, lib},
		Location: []*profile.Location{
			{ID: 1, Mapping: anon, Address: 0x7f0000000100},
			{ID: 2, Mapping: lib, Address: 0x7f1000000200},
			{ID: 3, Mapping: dump, Address: 0x1234},
			{ID: 4, Address: 0x5000},
			{ID: 5, Mapping: anon},
			{ID: 6, Mapping: anon, Address: 0x7f0000000100},
			{ID: 7, Mapping: anon, Address: 0x7f0000000200, Line: []profile.Line{{Function: fn, Line: 5}}},
		},
		Function: []*profile.Function{fn},
	}
	p.Sample = []*profile.Sample{{Location: p.Location, Value: []int64{1}}}
	var jit bytes.Buffer
	if err := p.WriteUncompressed(&jit); err != nil {
		t.Fatal(err)
	}
	seeds["JIT addresses"] = jit.Bytes()
	// The same with its mappings last, after the locations that refer
	// to them (upstream writes them first; any order decodes).
	var first, mappings []byte
	for data := jit.Bytes(); len(data) > 0; {
		field, _, _, _, rest, ok := nextField(data)
		if !ok {
			t.Fatal("JIT addresses: not well-formed")
		}
		if field == profileMapping {
			mappings = append(mappings, data[:len(data)-len(rest)]...)
		} else {
			first = append(first, data[:len(data)-len(rest)]...)
		}
		data = rest
	}
	seeds["mappings last"] = append(first, mappings...)
	// has_functions as a 10-byte varint whose bits beyond 64 upstream's
	// decoder drops (it reads false) and encoding/binary calls an
	// overflow; then the string table's "".
	overlong := []byte{0x38, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}
	seeds["overlong varint"] = append(append([]byte{0x1a, byte(len(overlong))}, overlong...), 0x22, 0x00, 0x32, 0x00) // and a location
	return seeds
}

// TestScan: the quick scan finds the mappings that locations refer to,
// with the files and flags that parsing the whole profile finds, and the
// addresses the JIT stage may attach, on real and made-up profiles.
func TestScan(t *testing.T) {
	for name, data := range hintSeeds(t) {
		t.Run(name, func(t *testing.T) {
			want, err := profile.ParseUncompressed(data)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := scan(data)
			if !ok {
				t.Fatal("scan failed on a profile that parses")
			}
			if g, w := fmt.Sprint(mappingKeys(got.Mappings)), fmt.Sprint(mappingKeys(referenced(want))); g != w || len(got.Mappings) == 0 {
				t.Errorf("scan: mappings %s\nparsed: %s", g, w)
			}
			if g, w := got.JITAddresses, jitCandidates(want); !slices.Equal(g, w) {
				t.Errorf("scan: JIT addresses %#x\nparsed: %#x", g, w)
			}
		})
	}
	if got, _ := scan(hintSeeds(t)["JIT addresses"]); !slices.Equal(got.JITAddresses, []uint64{0x7f0000000100, 0x5000, 0x7f0000000100}) {
		t.Errorf("JIT addresses: %#x", got.JITAddresses)
	}
	// Not a proto profile, or a truncated one: no hint.
	for _, data := range [][]byte{[]byte("--- heapz 1 ---\n"), hintSeeds(t)["four mappings"][:40]} {
		if h, ok := scan(data); ok {
			t.Errorf("scan(%q) = %v, true; want not ok", data, mappingKeys(h.Mappings))
		}
	}
}

// TestParseLimitHint: the hint comes before the parse with the mappings
// of the profile that locations refer to (one of the four), gzipped or
// not, and not at all for a legacy profile.
func TestParseLimitHint(t *testing.T) {
	data := hintSeeds(t)["four mappings"]
	var gz bytes.Buffer
	p, err := profile.ParseUncompressed(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(&gz); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"plain": data, "gzip": gz.Bytes()} {
		var hinted []*profile.Mapping
		p, _, err := ParseLimitHint(data, DefaultMaxDecompressed, func(h Hint) { hinted = h.Mappings })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g, w := fmt.Sprint(mappingKeys(hinted)), fmt.Sprint(mappingKeys(referenced(p))); g != w || len(hinted) != 1 {
			t.Errorf("%s: hint = %s, parsed %s", name, g, w)
		}
	}
	called := false
	if _, _, err := ParseLimitHint([]byte("heap profile: 1: 8 [ 1: 8] @ heapprofile\n1: 8 [1: 8] @ 0x1\n"), DefaultMaxDecompressed,
		func(Hint) { called = true }); err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("hint called for a legacy heap profile")
	}
}

// FuzzScan checks that the quick scan never fails on, and agrees with,
// whatever upstream's decoder accepts (the mappings its locations refer
// to, the JIT stage's candidate addresses), and never panics on anything
// else.
func FuzzScan(f *testing.F) {
	for _, data := range hintSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := scan(data)
		want, err := profile.ParseUncompressed(data)
		if err != nil {
			return
		}
		if !ok {
			t.Fatalf("scan failed on a profile upstream parses: %v", mappingKeys(want.Mapping))
		}
		if g, w := fmt.Sprint(mappingKeys(got.Mappings)), fmt.Sprint(mappingKeys(referenced(want))); g != w {
			t.Fatalf("scan: mappings %s\nparsed: %s", g, w)
		}
		if g, w := got.JITAddresses, jitCandidates(want); !slices.Equal(g, w) {
			t.Fatalf("scan: JIT addresses %#x\nparsed: %#x", g, w)
		}
	})
}
