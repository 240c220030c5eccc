// Package folded turns a pprof profile into call stacks, one per
// distinct path from the root to a leaf, and writes them in Brendan
// Gregg's folded-stacks format:
//
//	main;compute;std::vector<int>::push_back 1234
//
// one line per stack, frames root first and separated by ";", then a
// space and the stack's value: the sum of one sample value (pprof's
// -sample_index) over every sample with that stack, as an integer in the
// sample type's own unit, never scaled. This is what stackcollapse-*.pl
// produce and flamegraph.pl, speedscope and inferno read; unlike
// "pprof -raw | stackcollapse-go.pl" it honours -sample_index, so heap
// profiles with two or four values per sample come out right.
//
// # Frames
//
// Every line of a location is its own frame (an inlined call is a frame
// of its own, marked [Frame.Inlined]); a sample's stack is its locations
// from the outermost caller to the leaf, and within a location its lines
// from the outermost function to the innermost. Frames are named like
// upstream pprof's graph nodes (NodeInfo.PrintableName), after applying
// the granularity the way pprof's -functions, -filefunctions, -files,
// -lines and -addresses do:
//
//	functions       main.compute
//	filefunctions   main.compute /src/main.go
//	files           /src/main.go
//	lines           main.compute /src/main.go:42   (:42:7 with Options.Columns)
//	addresses       000000000040123f main.compute /src/main.go:42
//
// A location without symbol information is named after its mapping's
// file, "[libc.so.6]", preceded by its address at addresses granularity,
// or "<unknown>" when there is no file either.
//
// Names are made safe for the format: ";" becomes ":", and control
// characters (newlines, tabs, ...) become spaces.
package folded

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/pprof/profile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// Options says which value to sum and how finely to tell code apart.
// The zero value sums the first sample value at functions granularity,
// with inlined calls as frames of their own.
type Options struct {
	// SampleIndex selects the value summed per stack: an index into the
	// profile's SampleType and every sample's Value (pprof's
	// -sample_index, resolved to a number).
	SampleIndex int
	// Granularity is one of "functions" (also the meaning of ""),
	// "filefunctions", "files", "lines" or "addresses", as in pprof.
	Granularity string
	// NoInlines folds inlined calls into their caller, so each location
	// is one frame named after its outermost function (pprof's
	// -noinlines).
	NoInlines bool
	// Columns keeps column numbers in line numbers (pprof's
	// -show_columns); it only matters at lines and addresses granularity.
	Columns bool
	// Owned says that the caller gives the profile up: Stacks applies
	// the granularity to it in place rather than to a copy, which for a
	// profile of hundreds of thousands of functions saves a second and
	// as much memory as the profile takes.
	Owned bool
}

// Frame is one entry of a stack: a function (or file, line or address,
// depending on the granularity) and what a renderer needs to draw it.
// Stacks share their Frames: treat them as read-only.
type Frame struct {
	// Name is the printable name described in the package comment; it
	// never contains ";" or control characters.
	Name string
	// Package groups frames for colouring: the C++ scope of the
	// function (everything before its last top-level "::"), else its Go
	// package path, else (C functions, unsymbolized code) Object; at
	// files granularity the file's directory. It may be empty.
	Package string
	// Object is the base name of the file of the location's mapping
	// ("libc.so.6", "module.elf"), or "" if it has none.
	Object string
	// JIT reports JIT-compiled code: the location's mapping is a JIT
	// object attached by jitpprof (see jprofile.IsJITMapping).
	JIT bool
	// Inlined reports that the compiler inlined this function into the
	// frame before it (its caller).
	Inlined bool
}

// Stack is a distinct call stack and its value.
type Stack struct {
	// Frames runs from the root (outermost caller) to the leaf. It is
	// never empty.
	Frames []*Frame
	// Value is the sum of the selected sample value over the samples
	// with this stack. It is never zero; it is negative only for
	// profiles with negative values (a -diff_base comparison).
	Value int64
}

// Stacks returns the distinct stacks of p with their summed values,
// dropping stacks whose values add up to zero. p is not modified (unless
// Options.Owned): the granularity is applied to a copy, with upstream's
// (*profile.Profile).Aggregate. A sample without locations gets the
// single frame "<unknown>".
//
// The result is sorted by the frames' names, compared frame by frame
// from the root, so it is deterministic and stacks that differ only in
// what the folded format cannot show (whether a frame was inlined, its
// object or package) are adjacent.
//
// Stacks costs a copy of p plus memory linear in the total depth of the
// distinct stacks; the frames themselves are shared.
func Stacks(p *profile.Profile, o Options) ([]Stack, error) {
	if o.SampleIndex < 0 || o.SampleIndex >= len(p.SampleType) {
		return nil, fmt.Errorf("sample index %d out of range: the profile has %d sample types", o.SampleIndex, len(p.SampleType))
	}
	p, err := aggregate(p, o)
	if err != nil {
		return nil, err
	}

	b := builder{
		frames: map[Frame]*Frame{},
		ids:    map[*Frame]uint32{},
		byLoc:  map[*profile.Location][]*Frame{},
	}
	index := map[string]int{} // stack key -> position in stacks
	var stacks []Stack
	var frames []*Frame
	var key []byte
	for _, s := range p.Sample {
		if o.SampleIndex >= len(s.Value) {
			return nil, fmt.Errorf("sample with %d values has no value %d", len(s.Value), o.SampleIndex)
		}
		frames = frames[:0]
		for i := len(s.Location) - 1; i >= 0; i-- {
			frames = append(frames, b.locationFrames(s.Location[i])...)
		}
		if len(frames) == 0 {
			frames = append(frames, b.intern(Frame{Name: "<unknown>"}))
		}
		key = key[:0]
		for _, f := range frames {
			key = binary.LittleEndian.AppendUint32(key, b.ids[f])
		}
		v := s.Value[o.SampleIndex]
		if i, ok := index[string(key)]; ok {
			stacks[i].Value += v
			continue
		}
		index[string(key)] = len(stacks)
		stacks = append(stacks, Stack{Frames: slices.Clone(frames), Value: v})
	}
	stacks = slices.DeleteFunc(stacks, func(s Stack) bool { return s.Value == 0 })
	slices.SortFunc(stacks, Compare)
	return stacks, nil
}

// aggregate returns a copy of p at the granularity o asks for, as
// upstream's driver does: addresses granularity with inlined frames is
// the profile as it is; everything else goes through Aggregate.
func aggregate(p *profile.Profile, o Options) (*profile.Profile, error) {
	var function, filename, linenumber, address bool
	switch o.Granularity {
	case "", "functions":
		function = true
	case "filefunctions":
		function, filename = true, true
	case "files":
		filename = true
	case "lines":
		function, filename, linenumber = true, true, true
	case "addresses":
		if !o.NoInlines {
			return p, nil // Nothing to aggregate, nothing to copy.
		}
		function, filename, linenumber, address = true, true, true, true
	default:
		return nil, fmt.Errorf("unknown granularity %q (want functions, filefunctions, files, lines or addresses)", o.Granularity)
	}
	c := p
	if !o.Owned {
		c = p.Copy()
	}
	if err := c.Aggregate(!o.NoInlines, function, filename, linenumber, o.Columns, address); err != nil {
		return nil, fmt.Errorf("aggregating the profile: %w", err)
	}
	return c, nil
}

// builder interns frames and caches each location's frames.
type builder struct {
	frames map[Frame]*Frame
	ids    map[*Frame]uint32
	byLoc  map[*profile.Location][]*Frame
}

func (b *builder) intern(f Frame) *Frame {
	if p, ok := b.frames[f]; ok {
		return p
	}
	p := &f
	b.frames[f] = p
	b.ids[p] = uint32(len(b.ids))
	return p
}

// locationFrames returns the frames of l, outermost function first.
func (b *builder) locationFrames(l *profile.Location) []*Frame {
	if fs, ok := b.byLoc[l]; ok {
		return fs
	}
	var object, objfile string
	jit := false
	if m := l.Mapping; m != nil && m.File != "" {
		objfile = m.File
		object = filepath.Base(m.File)
		jit = IsJIT(m)
	}
	var fs []*Frame
	if len(l.Line) == 0 {
		name := printableName(l.Address, profile.Line{}, objfile)
		fs = append(fs, b.intern(Frame{Name: name, Package: object, Object: object, JIT: jit}))
	}
	for i := len(l.Line) - 1; i >= 0; i-- {
		line := l.Line[i]
		fs = append(fs, b.intern(Frame{
			Name:    printableName(l.Address, line, objfile),
			Package: packageKey(line.Function, object),
			Object:  object,
			JIT:     jit,
			Inlined: i < len(l.Line)-1,
		}))
	}
	b.byLoc[l] = fs
	return fs
}

// IsJIT reports whether m is a mapping of JIT-compiled code as
// jitpprof's extended-mapping stage makes them (see
// [jprofile.IsJITMapping]).
func IsJIT(m *profile.Mapping) bool { return jprofile.IsJITMapping(m) }

// printableName names one line of a location the way upstream's
// graph.NodeInfo.PrintableName does (with nodeInfo's rules for when the
// object file is shown), then makes it safe for the folded format.
func printableName(addr uint64, line profile.Line, objfile string) string {
	var name, file string
	if fn := line.Function; fn != nil {
		name = fn.Name
		if fn.Filename != "" {
			file = filepath.Clean(fn.Filename)
		}
	}
	var parts []string
	if addr != 0 {
		parts = append(parts, fmt.Sprintf("%016x", addr))
	}
	if name != "" {
		parts = append(parts, name)
	}
	switch {
	case line.Function != nil && line.Line != 0:
		s := fmt.Sprintf("%s:%d", file, line.Line)
		if line.Column != 0 {
			s += fmt.Sprintf(":%d", line.Column)
		}
		parts = append(parts, s)
	case file != "":
		parts = append(parts, file)
	case name != "":
	case objfile != "":
		parts = append(parts, "["+filepath.Base(objfile)+"]")
	default:
		parts = append(parts, "<unknown>")
	}
	return Sanitize(strings.Join(parts, " "))
}

// Sanitize makes name safe as a frame of the folded format: ";" becomes
// ":", control characters become spaces and invalid UTF-8 becomes
// U+FFFD. Names that need none of this are returned as they are.
func Sanitize(name string) string {
	if utf8.ValidString(name) && !strings.ContainsFunc(name, unsafeRune) {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
}

func unsafeRune(r rune) bool { return r == ';' || unicode.IsControl(r) }

// packageKey returns the colouring key of a frame of function fn in the
// named object; see Frame.Package.
func packageKey(fn *profile.Function, object string) string {
	if fn == nil {
		return object
	}
	if fn.Name == "" {
		if fn.Filename != "" {
			return filepath.Dir(filepath.Clean(fn.Filename))
		}
		return object
	}
	if scope := cxxScope(fn.Name); scope != "" {
		return scope
	}
	if pkg := goPackage(fn.Name); pkg != "" {
		return pkg
	}
	return object
}

// cxxScope returns the part of a C++ name before its last "::" outside
// parentheses, angle and square brackets: "ns::Class<a::b>" for
// "ns::Class<a::b>::method(std::string)", "" if there is none.
func cxxScope(name string) string {
	depth, last := 0, -1
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '(', '<', '[':
			depth++
		case ')', '>', ']':
			depth = max(depth-1, 0)
		case ':':
			if depth == 0 && i+1 < len(name) && name[i+1] == ':' {
				last = i
				i++
			}
		}
	}
	if last <= 0 {
		return ""
	}
	return name[:last]
}

// goPackage returns the Go package path of a function name, the name up
// to the first "." after the last "/" (generic type arguments ignored):
// "github.com/x/y" for "github.com/x/y.(*T).M[...]"; "" if there is no
// such ".".
func goPackage(name string) string {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	start := strings.LastIndexByte(name, '/') + 1
	dot := strings.IndexByte(name[start:], '.')
	if dot <= 0 {
		return ""
	}
	return name[:start+dot]
}

// Compare orders stacks by their frames' names, frame by frame from the
// root (a stack sorts before its extensions), then by the frames' other
// fields, so that stacks that print the same are adjacent. It returns 0
// only for stacks with equal frames. Stacks returns stacks in this order.
func Compare(a, b Stack) int {
	if c := slices.CompareFunc(a.Frames, b.Frames, func(x, y *Frame) int {
		return strings.Compare(x.Name, y.Name)
	}); c != 0 {
		return c
	}
	return slices.CompareFunc(a.Frames, b.Frames, compareFrames)
}

// compareFrames orders frames by name, then package, object, JIT and
// inlined (false first); it returns 0 only for equal frames.
func compareFrames(a, b *Frame) int {
	if a == b {
		return 0
	}
	return cmp.Or(
		strings.Compare(a.Name, b.Name),
		strings.Compare(a.Package, b.Package),
		strings.Compare(a.Object, b.Object),
		compareBool(a.JIT, b.JIT),
		compareBool(a.Inlined, b.Inlined),
	)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
