package folded

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// lines returns the folded lines of stacks.
func lines(t *testing.T, stacks []Stack) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, stacks); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// frames returns the frame lists of the folded lines, without values.
func frames(folded []string) []string {
	var out []string
	for _, l := range folded {
		out = append(out, l[:strings.LastIndexByte(l, ' ')])
	}
	return out
}

func TestStacksGranularity(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{
			name: "functions",
			opts: Options{},
			want: []string{
				"<unknown>",
				"main",
				"main;app::Worker::run();app::helper(int)",
				"main;app::Worker::run();kern::saxpy(float*, int)",
				"main;app::Worker::run();kern::saxpy(float*, int);[libc.so.6]",
				"main;app::Worker::run();std::vector<int, std::allocator<int> >::push_back(int const&)",
				"main;app::Worker::run();std::vector<int, std::allocator<int> >::push_back(int const&);malloc",
			},
		},
		{
			name: "noinlines",
			opts: Options{Granularity: "functions", NoInlines: true},
			want: []string{
				"<unknown>",
				"main",
				"main;app::Worker::run()",
				"main;app::Worker::run();kern::saxpy(float*, int)",
				"main;app::Worker::run();kern::saxpy(float*, int);[libc.so.6]",
				"main;app::Worker::run();std::vector<int, std::allocator<int> >::push_back(int const&)",
				"main;app::Worker::run();std::vector<int, std::allocator<int> >::push_back(int const&);malloc",
			},
		},
		{
			name: "filefunctions",
			opts: Options{Granularity: "filefunctions"},
			want: []string{
				"<unknown>",
				"main /src/app/main.cc",
				"main /src/app/main.cc;app::Worker::run() /src/app/worker.cc;app::helper(int) /src/app/worker.h",
				"main /src/app/main.cc;app::Worker::run() /src/app/worker.cc;kern::saxpy(float*, int) /jit/kernel.cc",
				"main /src/app/main.cc;app::Worker::run() /src/app/worker.cc;kern::saxpy(float*, int) /jit/kernel.cc;[libc.so.6]",
				"main /src/app/main.cc;app::Worker::run() /src/app/worker.cc;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h",
				"main /src/app/main.cc;app::Worker::run() /src/app/worker.cc;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h;malloc",
			},
		},
		{
			name: "files",
			opts: Options{Granularity: "files"},
			want: []string{
				"/src/app/main.cc",
				"/src/app/main.cc;/src/app/worker.cc;/jit/kernel.cc",
				"/src/app/main.cc;/src/app/worker.cc;/jit/kernel.cc;[libc.so.6]",
				"/src/app/main.cc;/src/app/worker.cc;/src/app/worker.h",
				"/src/app/main.cc;/src/app/worker.cc;/usr/include/c++/12/bits/stl_vector.h",
				"/src/app/main.cc;/src/app/worker.cc;/usr/include/c++/12/bits/stl_vector.h;[libc.so.6]",
				"<unknown>",
			},
		},
		{
			name: "lines",
			opts: Options{Granularity: "lines"},
			want: []string{
				"<unknown>",
				"main /src/app/main.cc:10",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:20;app::helper(int) /src/app/worker.h:5",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:20;app::helper(int) /src/app/worker.h:6",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25;kern::saxpy(float*, int) /jit/kernel.cc:7",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25;kern::saxpy(float*, int) /jit/kernel.cc:7;[libc.so.6]",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200;malloc",
			},
		},
		{
			name: "lines with columns",
			opts: Options{Granularity: "lines", Columns: true},
			want: []string{
				"<unknown>",
				"main /src/app/main.cc:10",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:20;app::helper(int) /src/app/worker.h:5",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:20;app::helper(int) /src/app/worker.h:6",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25:7;kern::saxpy(float*, int) /jit/kernel.cc:7",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25:7;kern::saxpy(float*, int) /jit/kernel.cc:7;[libc.so.6]",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25:7;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200",
				"main /src/app/main.cc:10;app::Worker::run() /src/app/worker.cc:25:7;std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200;malloc",
			},
		},
		{
			name: "addresses",
			opts: Options{Granularity: "addresses"},
			want: []string{
				"0000000000401000 main /src/app/main.cc:10",
				"0000000000401000 main /src/app/main.cc:10;0000000000401100 app::Worker::run() /src/app/worker.cc:20;0000000000401100 app::helper(int) /src/app/worker.h:5",
				"0000000000401000 main /src/app/main.cc:10;0000000000401104 app::Worker::run() /src/app/worker.cc:20;0000000000401104 app::helper(int) /src/app/worker.h:6",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25:7;0000000000401300 std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25:7;0000000000401300 std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200;00007f0000002000 malloc",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25:7;00007fff00001000 kern::saxpy(float*, int) /jit/kernel.cc:7",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25:7;00007fff00001000 kern::saxpy(float*, int) /jit/kernel.cc:7;00007f0000001234 [libc.so.6]",
				"<unknown>",
			},
		},
		{
			name: "addresses without inlines",
			opts: Options{Granularity: "addresses", NoInlines: true},
			want: []string{
				"0000000000401000 main /src/app/main.cc:10",
				"0000000000401000 main /src/app/main.cc:10;0000000000401100 app::Worker::run() /src/app/worker.cc:20",
				"0000000000401000 main /src/app/main.cc:10;0000000000401104 app::Worker::run() /src/app/worker.cc:20",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25;0000000000401300 std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25;0000000000401300 std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200;00007f0000002000 malloc",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25;00007fff00001000 kern::saxpy(float*, int) /jit/kernel.cc:7",
				"0000000000401000 main /src/app/main.cc:10;0000000000401200 app::Worker::run() /src/app/worker.cc:25;00007fff00001000 kern::saxpy(float*, int) /jit/kernel.cc:7;00007f0000001234 [libc.so.6]",
				"<unknown>",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stacks, err := Stacks(testProfile(heap2Types()...), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := frames(lines(t, stacks)); !slices.Equal(got, tt.want) {
				t.Errorf("got stacks\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

// TestStacksTotals checks, for every sample index of 2- and 4-value
// heap profiles and every granularity, that the folded values add up to
// the sum of that value over all samples, computed independently.
func TestStacksTotals(t *testing.T) {
	for _, types := range [][]*profile.ValueType{heap2Types(), heap4Types()} {
		p := testProfile(types...)
		for i, st := range types {
			var want int64
			for _, s := range p.Sample {
				want += s.Value[i]
			}
			for _, g := range []string{"functions", "filefunctions", "files", "lines", "addresses"} {
				for _, noInlines := range []bool{false, true} {
					name := fmt.Sprintf("%d values/%s/%s/noinlines=%v", len(types), st.Type, g, noInlines)
					t.Run(name, func(t *testing.T) {
						stacks, err := Stacks(p, Options{SampleIndex: i, Granularity: g, NoInlines: noInlines})
						if err != nil {
							t.Fatal(err)
						}
						var got int64
						for _, l := range lines(t, stacks) {
							v, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
							if err != nil {
								t.Fatalf("line %q: %v", l, err)
							}
							got += v
						}
						if got != want {
							t.Errorf("got total %d, want %d", got, want)
						}
					})
				}
			}
		}
	}
}

func TestStacksFrames(t *testing.T) {
	p := testProfile(heap2Types()...)
	stacks, err := Stacks(p, Options{Granularity: "lines"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Frame{}
	for _, s := range stacks {
		for _, f := range s.Frames {
			byName[f.Name] = *f
		}
	}
	tests := []struct {
		name string
		want Frame
	}{
		{name: "main /src/app/main.cc:10", want: Frame{Package: "app", Object: "app"}},
		{name: "app::Worker::run() /src/app/worker.cc:25", want: Frame{Package: "app::Worker", Object: "app"}},
		{name: "app::Worker::run() /src/app/worker.cc:20", want: Frame{Package: "app::Worker", Object: "app"}},
		{name: "app::helper(int) /src/app/worker.h:5", want: Frame{Package: "app", Object: "app", Inlined: true}},
		{name: "std::vector<int, std::allocator<int> >::push_back(int const&) /usr/include/c++/12/bits/stl_vector.h:1200", want: Frame{Package: "std::vector<int, std::allocator<int> >", Object: "app"}},
		{name: "kern::saxpy(float*, int) /jit/kernel.cc:7", want: Frame{Package: "kern", Object: "module.elf", JIT: true}},
		{name: "[libc.so.6]", want: Frame{Package: "libc.so.6", Object: "libc.so.6"}},
		{name: "malloc", want: Frame{Package: "libc.so.6", Object: "libc.so.6"}},
		{name: "<unknown>", want: Frame{}},
	}
	for _, tt := range tests {
		tt.want.Name = tt.name
		if got, ok := byName[tt.name]; !ok {
			t.Errorf("no frame %q", tt.name)
		} else if got != tt.want {
			t.Errorf("got frame %+v, want %+v", got, tt.want)
		}
	}
}

// TestGolden writes every granularity of the 4-value heap profile, at
// every sample index, to one golden file.
func TestGolden(t *testing.T) {
	p := testProfile(heap4Types()...)
	var buf bytes.Buffer
	for i, st := range p.SampleType {
		for _, o := range []Options{
			{Granularity: "functions"},
			{Granularity: "functions", NoInlines: true},
			{Granularity: "filefunctions"},
			{Granularity: "files"},
			{Granularity: "lines"},
			{Granularity: "lines", Columns: true},
			{Granularity: "addresses"},
			{Granularity: "addresses", NoInlines: true},
		} {
			o.SampleIndex = i
			stacks, err := Stacks(p, o)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&buf, "# sample_index=%s granularity=%s noinlines=%v columns=%v\n", st.Type, o.Granularity, o.NoInlines, o.Columns)
			if err := Write(&buf, stacks); err != nil {
				t.Fatal(err)
			}
		}
	}
	golden := filepath.Join("testdata", "heap4.folded")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("got output differing from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestStacksDoesNotModifyProfile(t *testing.T) {
	for _, g := range []string{"functions", "files", "lines", "addresses"} {
		p := testProfile(heap2Types()...)
		before := p.String()
		if _, err := Stacks(p, Options{Granularity: g, NoInlines: true}); err != nil {
			t.Fatal(err)
		}
		if after := p.String(); after != before {
			t.Errorf("granularity %s: got profile changed to\n%s\nwant\n%s", g, after, before)
		}
	}
}

func TestStacksErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "negative index", opts: Options{SampleIndex: -1}, want: "sample index -1 out of range"},
		{name: "index too big", opts: Options{SampleIndex: 2}, want: "sample index 2 out of range"},
		{name: "granularity", opts: Options{Granularity: "modules"}, want: `unknown granularity "modules"`},
	}
	for _, tt := range tests {
		_, err := Stacks(testProfile(heap2Types()...), tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestStacksMergeAndOrder(t *testing.T) {
	p := testProfile(heap2Types()...)
	stacks, err := Stacks(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(stacks, Compare) {
		t.Error("got stacks out of order")
	}
	for i, s := range stacks {
		if s.Value == 0 || len(s.Frames) == 0 {
			t.Errorf("stack %d: got value %d with %d frames, want neither zero", i, s.Value, len(s.Frames))
		}
		for j := range i {
			if Compare(stacks[j], s) == 0 {
				t.Errorf("stacks %d and %d: got equal stacks, want them merged", j, i)
			}
		}
	}
	// The third and last-but-one samples share a stack.
	want := p.Sample[2].Value[0] + p.Sample[8].Value[0]
	for _, s := range stacks {
		if len(s.Frames) == 3 && strings.HasPrefix(s.Frames[2].Name, "std::vector") {
			if s.Value != want {
				t.Errorf("push_back stack: got value %d, want %d", s.Value, want)
			}
		}
	}
}

func TestWrite(t *testing.T) {
	f := func(name string, inlined bool) *Frame { return &Frame{Name: name, Inlined: inlined} }
	tests := []struct {
		name   string
		stacks []Stack
		want   string
	}{
		{name: "empty", want: ""},
		{
			name:   "one",
			stacks: []Stack{{Frames: []*Frame{f("a", false), f("b", false)}, Value: 3}},
			want:   "a;b 3\n",
		},
		{
			name: "same text merged",
			stacks: []Stack{
				{Frames: []*Frame{f("a", false), f("b", false)}, Value: 3},
				{Frames: []*Frame{f("a", false), f("b", true)}, Value: 4},
				{Frames: []*Frame{f("a", false)}, Value: -1},
			},
			want: "a;b 7\na -1\n",
		},
		{
			name: "merged to zero",
			stacks: []Stack{
				{Frames: []*Frame{f("a", false)}, Value: 3},
				{Frames: []*Frame{f("a", true)}, Value: -3},
			},
			want: "",
		},
		{
			name:   "sanitized",
			stacks: []Stack{{Frames: []*Frame{f("x;y", false), f("new\nline\t", false)}, Value: 1}},
			want:   "x:y;new line  1\n",
		},
		{
			name:   "no frames",
			stacks: []Stack{{Value: 1}},
			want:   "",
		},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Write(&buf, tt.stacks); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ name, want string }{
		{name: "std::map<int, int>::find(int const&)", want: "std::map<int, int>::find(int const&)"},
		{name: "a;b;c", want: "a:b:c"},
		{name: "line1\nline2\r\n", want: "line1 line2  "},
		{name: "nul\x00del\x7fc1\u0085", want: "nul del c1 "},
		{name: "bad\xffutf8", want: "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.name); got != tt.want {
			t.Errorf("Sanitize(%q): got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPackageKey(t *testing.T) {
	tests := []struct {
		name, file, object string
		want               string
	}{
		{name: "main.main", want: "main"},
		{name: "github.com/x/y.(*T).Method", want: "github.com/x/y"},
		{name: "github.com/x/y.F[go.shape.*github.com/a/b.T]", want: "github.com/x/y"},
		{name: "runtime.gcBgMarkWorker.func1", want: "runtime"},
		{name: "ns::f()", want: "ns"},
		{name: "a::b::C<x::y>::m(std::string const&) const", want: "a::b::C<x::y>"},
		{name: "(anonymous namespace)::helper()", want: "(anonymous namespace)"},
		{name: "std::function<void ()>::operator()() const", want: "std::function<void ()>"},
		{name: "ns::operator<(A const&, A const&)", want: "ns"},
		{name: "::global()", object: "app", want: "app"},
		{name: "malloc", object: "libc.so.6", want: "libc.so.6"},
		{name: "", file: "/src/app/main.cc", object: "app", want: "/src/app"},
		{name: "", object: "app", want: "app"},
	}
	for _, tt := range tests {
		fn := &profile.Function{Name: tt.name, Filename: tt.file}
		if got := packageKey(fn, tt.object); got != tt.want {
			t.Errorf("packageKey(%q, %q, %q): got %q, want %q", tt.name, tt.file, tt.object, got, tt.want)
		}
	}
}

func TestIsJIT(t *testing.T) {
	tests := []struct {
		m    *profile.Mapping
		want bool
	}{
		{m: &profile.Mapping{Limit: ^uint64(0), File: "/tmp/jit/a.elf"}, want: true},
		{m: &profile.Mapping{Limit: ^uint64(0), File: "/tmp/jit/a.so"}, want: false},
		{m: &profile.Mapping{Limit: ^uint64(0)}, want: false},
		{m: &profile.Mapping{Start: 0x1000, Limit: 0x2000, File: "/tmp/jit/a.elf"}, want: false},
		{m: nil, want: false},
	}
	for _, tt := range tests {
		if got := IsJIT(tt.m); got != tt.want {
			t.Errorf("IsJIT(%+v): got %v, want %v", tt.m, got, tt.want)
		}
	}
}

// TestUpstreamProfiles checks the totals on upstream pprof's own legacy
// profiles (heap profiles with 2 and 4 values, CPU, contention).
func TestUpstreamProfiles(t *testing.T) {
	dir := filepath.Join(testenv.UpstreamDir(t), "profile", "testdata")
	for _, name := range []string{"cppbench.heap", "gobench.heap", "java.heap", "cppbench.cpu", "cppbench.contention"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, st := range p.SampleType {
			var want int64
			for _, s := range p.Sample {
				want += s.Value[i]
			}
			for _, g := range []string{"functions", "addresses"} {
				stacks, err := Stacks(p, Options{SampleIndex: i, Granularity: g})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var got int64
				for _, s := range stacks {
					got += s.Value
				}
				if got != want {
					t.Errorf("%s, %s, %s: got total %d, want %d", name, st.Type, g, got, want)
				}
			}
		}
	}
}
