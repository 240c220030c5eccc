package symbolizer

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// fakeFrames answers 0x1000 with an inline chain, 0x2000 with one frame
// and anything else with nothing.
type fakeFrames struct{}

func (fakeFrames) Frames(addr uint64) []jprofile.Frame {
	switch addr {
	case 0x1000:
		return []jprofile.Frame{{Func: "_Z6helperv", File: "jit.cc", Line: 3, StartLine: 2}, {Func: "_Z4workv", File: "jit.cc", Line: 9, StartLine: 8}}
	case 0x2000:
		return []jprofile.Frame{{Func: "_Z4workv", File: "jit.cc", Line: 10, StartLine: 8}}
	}
	return nil
}

// object is a JIT object whose frames src gives, or err says why not;
// opens counts the calls.
type object struct {
	src   jprofile.FrameSource
	err   error
	mu    sync.Mutex // objects are opened concurrently
	opens int
}

func (o *object) FrameSource() (jprofile.FrameSource, error) {
	o.mu.Lock()
	o.opens++
	o.mu.Unlock()
	return o.src, o.err
}

func TestSymbolize(t *testing.T) {
	objects := map[string]*object{
		"/jit/a.elf":      {src: fakeFrames{}},
		"/jit/broken.elf": {err: errors.New("unsupported machine")},
	}
	newProfile := func() (*profile.Profile, []Mapping) {
		old := &profile.Function{ID: 7, Name: "main"}
		p := &profile.Profile{Function: []*profile.Function{old}}
		var jms []Mapping
		for i, path := range []string{"/jit/a.elf", "/jit/broken.elf"} {
			m := &profile.Mapping{ID: uint64(i + 1), Limit: ^uint64(0), File: path}
			jm := Mapping{Path: path, Object: objects[path], Mapping: m}
			for _, a := range []uint64{0x1000, 0x2000, 0x3000} {
				l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: a, Mapping: m}
				p.Location = append(p.Location, l)
				jm.Locations = append(jm.Locations, l)
			}
			p.Mapping = append(p.Mapping, m)
			jms = append(jms, jm)
		}
		return p, jms
	}

	p, jms := newProfile()
	errs := Symbolize(p, jms, nil, nil)
	if len(errs) != 1 || errs[0].Error() != "/jit/broken.elf: unsupported machine" {
		t.Errorf("errors = %v, want one naming /jit/broken.elf", errs)
	}
	got := func(l *profile.Location) string {
		s := ""
		for _, ln := range l.Line {
			s += fmt.Sprintf("%s@%d#%d ", ln.Function.SystemName, ln.Line, ln.Function.ID)
		}
		return s
	}
	for i, want := range []string{"_Z6helperv@3#8 _Z4workv@9#9 ", "_Z4workv@10#9 ", "", "", "", ""} {
		if g := got(p.Location[i]); g != want {
			t.Errorf("location %#x of %s: lines %q, want %q", p.Location[i].Address, p.Location[i].Mapping.File, g, want)
		}
	}
	if m := p.Mapping[0]; !m.HasFunctions || !m.HasFilenames || !m.HasLineNumbers || !m.HasInlineFrames {
		t.Errorf("symbolized mapping flags = %+v, want all set", m)
	}
	if m := p.Mapping[1]; m.HasFunctions {
		t.Errorf("the mapping of the object that failed to open is marked symbolized")
	}
	if len(p.Function) != 3 {
		t.Errorf("%d functions, want 3: the profile's own and 2 deduplicated", len(p.Function))
	}

	for path, o := range objects {
		if o.opens != 1 {
			t.Errorf("%s: frames asked for %d times, want once", path, o.opens)
		}
	}
}

// addrFrames answers each address with one frame named after it.
type addrFrames struct{}

func (addrFrames) Frames(addr uint64) []jprofile.Frame {
	return []jprofile.Frame{{Func: fmt.Sprintf("f%x", addr), Line: int(addr % 1000)}}
}

// addRandomMapping adds to p, which has none, a JIT mapping of the object
// file with n locations at random addresses below limit (from seed), and
// returns it, its frames given by src.
func addRandomMapping(p *profile.Profile, file string, src jprofile.FrameSource, n int, seed, limit int64) Mapping {
	m := &profile.Mapping{ID: 1, Limit: ^uint64(0), File: file}
	p.Mapping = []*profile.Mapping{m}
	jm := Mapping{Path: m.File, Object: &object{src: src}, Mapping: m}
	r := rand.New(rand.NewSource(seed))
	for i := range n {
		l := &profile.Location{ID: uint64(i + 1), Address: uint64(r.Int63n(limit)), Mapping: m}
		p.Location = append(p.Location, l)
		jm.Locations = append(jm.Locations, l)
	}
	return jm
}

// TestSymbolizeManyLocations: the locations of one object, enough to be
// looked up by several workers in address order, each get their own
// frames and the Names the name function gives, and the functions are
// added in the order of the locations.
func TestSymbolizeManyLocations(t *testing.T) {
	p := &profile.Profile{}
	jm := addRandomMapping(p, "/jit/big.elf", addrFrames{}, 5*minSplit, 1, 1<<40)
	var progress Progress
	named := func(s string) string { return "demangled " + s }
	if errs := Symbolize(p, []Mapping{jm}, &progress, named); len(errs) != 0 {
		t.Fatal(errs)
	}
	for i, l := range p.Location {
		if len(l.Line) != 1 {
			t.Fatalf("location %d at %#x: %d lines, want 1", i, l.Address, len(l.Line))
		}
		if fn := l.Line[0].Function; fn.SystemName != fmt.Sprintf("f%x", l.Address) || fn.Name != named(fn.SystemName) || l.Line[0].Line != int64(l.Address%1000) {
			t.Fatalf("location %d at %#x: lines %+v", i, l.Address, l.Line)
		}
		if l.Line[0].Function != p.Function[i] { // the addresses are distinct
			t.Fatalf("location %d: function %d is not the %dth added", i, l.Line[0].Function.ID, i)
		}
	}
	if _, _, done, of := progress.Done(); done != of || of != len(p.Location) {
		t.Errorf("progress: %d of %d addresses, want all %d", done, of, len(p.Location))
	}
}

// sameNameFrames answers every address with an inline chain whose
// functions share system names: the leaf is one of three functions named
// "_Z1fv" (two files, two start lines), the caller "_Z1gv".
type sameNameFrames struct{}

func (sameNameFrames) Frames(addr uint64) []jprofile.Frame {
	leaf := []jprofile.Frame{
		{Func: "_Z1fv", File: "a.cc", StartLine: 1},
		{Func: "_Z1fv", File: "b.cc", StartLine: 1},
		{Func: "_Z1fv", File: "a.cc", StartLine: 7},
	}[addr%3]
	leaf.Line = int(addr % 100)
	return []jprofile.Frame{leaf, {Func: "_Z1gv", File: "a.cc", Line: 20, StartLine: 18}}
}

// TestSymbolizeSameSystemName: functions with one system name but another
// file or start line stay apart, however the locations are split among
// workers, each location's lines name its own, and the functions are
// added once each, in the order of the locations and their frames.
func TestSymbolizeSameSystemName(t *testing.T) {
	p := &profile.Profile{Function: []*profile.Function{{ID: 3, Name: "main"}}}
	jm := addRandomMapping(p, "/jit/same.elf", sameNameFrames{}, 4*minSplit, 2, 1<<30)
	named := func(s string) string { return "demangled " + s }
	if errs := Symbolize(p, []Mapping{jm}, nil, named); len(errs) != 0 {
		t.Fatal(errs)
	}
	// The order pprof's symbolizer would add them in: frame by frame.
	var want []string
	seen := map[string]bool{}
	for _, l := range p.Location {
		frames := sameNameFrames{}.Frames(l.Address)
		if len(l.Line) != len(frames) {
			t.Fatalf("location at %#x: %d lines, want %d", l.Address, len(l.Line), len(frames))
		}
		for i, f := range frames {
			fn := l.Line[i].Function
			if fn.SystemName != f.Func || fn.Name != named(f.Func) || fn.Filename != f.File || fn.StartLine != int64(f.StartLine) || l.Line[i].Line != int64(f.Line) {
				t.Fatalf("location at %#x, frame %d: function %+v line %d, want %+v", l.Address, i, *fn, l.Line[i].Line, f)
			}
			k := fmt.Sprintf("%s %s %d", f.Func, f.File, f.StartLine)
			if !seen[k] {
				seen[k] = true
				want = append(want, k)
			}
		}
	}
	var got []string
	for _, fn := range p.Function[1:] {
		got = append(got, fmt.Sprintf("%s %s %d", fn.SystemName, fn.Filename, fn.StartLine))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("functions added %q, want %q", got, want)
	}
	for i, fn := range p.Function {
		if want := uint64(3 + i); fn.ID != want {
			t.Errorf("function %d has ID %d, want %d", i, fn.ID, want)
		}
	}
}
