package flamegraph

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/folded"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// svgDoc is what the tests read back from a flame graph.
type svgDoc struct {
	Width  int       `xml:"width,attr"`
	Grid   int64     `xml:"data-grid,attr"`
	Groups []svgG    `xml:"g"`
	Texts  []svgText `xml:"text"`
	Script string    `xml:"script"`
}

type svgG struct {
	ID    string    `xml:"id,attr"`
	Rects []svgRect `xml:"rect"`
	Texts []svgText `xml:"text"`
}

type svgRect struct {
	Class string `xml:"class,attr"`
	X     int64  `xml:"x,attr"`
	Y     int64  `xml:"y,attr"`
	Width int64  `xml:"width,attr"`
	Title string `xml:"title"`
}

type svgText struct {
	ID   string  `xml:"id,attr"`
	X    float64 `xml:"x,attr"`
	Y    float64 `xml:"y,attr"`
	Text string  `xml:",chardata"`
}

// render writes stacks as a flame graph and parses it back, failing
// the test if it is not well-formed XML or its frames do not nest.
func render(t *testing.T, stacks []folded.Stack, o Options) ([]byte, *svgDoc) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, stacks, o); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("parsing the SVG: %v", err)
	}
	checkGeometry(t, &doc)
	return buf.Bytes(), &doc
}

func (d *svgDoc) group(id string) svgG {
	for _, g := range d.Groups {
		if g.ID == id {
			return g
		}
	}
	return svgG{}
}

func (d *svgDoc) text(id string) string {
	for _, t := range d.Texts {
		if t.ID == id {
			return t.Text
		}
	}
	return ""
}

// checkGeometry checks that the root spans the whole width and that
// every other frame lies inside one frame of the row below, its parent,
// with the children of each frame side by side within it.
func checkGeometry(t *testing.T, d *svgDoc) {
	t.Helper()
	rects := d.group("frames").Rects
	if len(rects) == 0 {
		return
	}
	root := rects[0]
	if root.X != 0 || root.Width != d.Grid {
		t.Errorf("root: got x %d width %d, want 0 and the whole %d", root.X, root.Width, d.Grid)
	}
	byRow := map[int64][]int{}
	for i, r := range rects {
		byRow[r.Y] = append(byRow[r.Y], i)
		if r.Y > root.Y {
			t.Errorf("frame %q: got y %d, below the root's %d", r.Title, r.Y, root.Y)
		}
	}
	for _, row := range byRow {
		slices.SortFunc(row, func(a, b int) int { return cmp.Compare(rects[a].X, rects[b].X) })
	}
	children := map[int][]int{}
	for i, r := range rects[1:] {
		// The parent is the last frame of the row below starting at or
		// before r, if r lies within it.
		below := byRow[r.Y+rowHeight]
		k := sort.Search(len(below), func(k int) bool { return rects[below[k]].X > r.X }) - 1
		parent := -1
		if k >= 0 {
			if p := rects[below[k]]; r.X+r.Width <= p.X+p.Width {
				parent = below[k]
			}
		}
		if parent < 0 {
			t.Errorf("frame %q at x %d y %d: got no parent below it", r.Title, r.X, r.Y)
			continue
		}
		children[parent] = append(children[parent], i+1)
	}
	for p, cs := range children {
		slices.SortFunc(cs, func(a, b int) int { return cmp.Compare(rects[a].X, rects[b].X) })
		var sum int64
		end := rects[p].X
		for _, c := range cs {
			if rects[c].X < end {
				t.Errorf("frame %q: got it overlapping its left sibling", rects[c].Title)
			}
			end = rects[c].X + rects[c].Width
			sum += rects[c].Width
		}
		if sum > rects[p].Width {
			t.Errorf("frame %q: got children %d wide in total, want at most its width %d", rects[p].Title, sum, rects[p].Width)
		}
	}
}

func TestGolden(t *testing.T) {
	data, _ := render(t, sampleStacks(), Options{SampleType: "inuse_space", Unit: "bytes", Subtitle: "heap.prof"})
	golden := filepath.Join("testdata", "sample.svg")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("got an SVG differing from %s (go test -update rewrites it)", golden)
	}
}

func TestFrames(t *testing.T) {
	_, doc := render(t, sampleStacks(), Options{Unit: "bytes"})
	tests := []struct {
		name      string
		wantTitle string
		wantWidth int64
	}{
		{name: "all", wantTitle: "all\n9.52 MiB (9,977,857 B), 100.00%", wantWidth: 9977857},
		{name: "main", wantTitle: "main\n9.52 MiB (9,977,857 B), 100.00%\nin app", wantWidth: 9977857},
		{name: "jit::query_42(Row*)", wantTitle: "jit::query_42(Row*)\n3.00 MiB (3,145,728 B), 31.53%\nJIT-compiled code in module.elf", wantWidth: 3145728},
		{name: "app::parse(std::string_view)", wantTitle: "app::parse(std::string_view)\n1.00 MiB (1,048,576 B), 10.51%\nin app, inlined", wantWidth: 1048576},
		{name: `a&b<c>"d"`, wantTitle: "a&b<c>\"d\"\n400.00 KiB (409,600 B), 4.11%\nin app", wantWidth: 409600},
	}
	for _, tt := range tests {
		found := false
		for _, r := range doc.group("frames").Rects {
			if strings.SplitN(r.Title, "\n", 2)[0] != tt.name {
				continue
			}
			found = true
			if r.Title != tt.wantTitle || r.Width != tt.wantWidth {
				t.Errorf("%s: got title %q width %d, want %q and %d", tt.name, r.Title, r.Width, tt.wantTitle, tt.wantWidth)
			}
		}
		if !found {
			t.Errorf("%s: got no such frame", tt.name)
		}
	}
	// The frame of value 1 is 0.0001 px wide.
	if got, want := doc.text("footer"), "13 frames drawn; 1 frame of at most 0.1 px not drawn: 1 B, 0.00% of the total."; got != want {
		t.Errorf("got footer %q, want %q", got, want)
	}
}

// TestEscaping feeds names with markup, control characters, invalid
// UTF-8 and CDATA ends, and expects them back from the XML parser.
func TestEscaping(t *testing.T) {
	tests := []struct{ name, want string }{
		{name: "a<b>&c", want: "a<b>&c"},
		{name: `q"uo't`, want: `q"uo't`},
		{name: "]]><script>alert(1)</script>", want: "]]><script>alert(1)</script>"},
		{name: "tab\there\nnewline\x00nul\x7f", want: "tab here newline nul "},
		{name: "bad\xffutf8\uffff", want: "bad\ufffdutf8\ufffd"},
		{name: "日本語::関数()", want: "日本語::関数()"},
	}
	var stacks []folded.Stack
	for _, tt := range tests {
		stacks = append(stacks, folded.Stack{Frames: []*folded.Frame{{Name: tt.name}}, Value: 100})
	}
	_, doc := render(t, stacks, Options{Title: "<&>"})
	got := map[string]bool{}
	for _, r := range doc.group("frames").Rects {
		got[strings.SplitN(r.Title, "\n", 2)[0]] = true
	}
	for _, tt := range tests {
		if !got[tt.want] {
			t.Errorf("name %q: got no frame titled %q", tt.name, tt.want)
		}
	}
	if title := doc.text("title"); title != "<&>" {
		t.Errorf("got title %q, want <&>", title)
	}
	for name, s := range map[string]string{"script": script, "style": style} {
		if strings.Contains(s, "]]>") {
			t.Errorf("the embedded %s contains ]]>, which ends its CDATA section", name)
		}
	}
}

func TestElision(t *testing.T) {
	// One wide stack and 1,000 stacks 0.001 px wide each.
	lines := []string{"main;big 999000"}
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("main;small%04d;leaf 1", i))
	}
	tests := []struct {
		name       string
		opts       Options
		wantFrames int
		wantFooter string
	}{
		{
			name:       "min width",
			opts:       Options{},
			wantFrames: 3,
			wantFooter: "3 frames drawn; 2,000 frames of at most 0.1 px not drawn: 1,000, 0.10% of the total.",
		},
		{
			name:       "everything",
			opts:       Options{MinFrameWidth: 1e-9},
			wantFrames: 2003,
			wantFooter: "2,003 frames drawn.",
		},
		{
			// Room for the root and main (351 bytes), not for big (199).
			name:       "max size",
			opts:       Options{MinFrameWidth: 1e-9, MaxSize: fixedCost() + 400, Unit: "bytes"},
			wantFrames: 2,
			wantFooter: "2 frames drawn; 2,001 frames of at most 1179 px not drawn: 976.56 KiB (1,000,000 B), 100.00% of the total.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, doc := render(t, stacksFrom(lines...), tt.opts)
			if got := len(doc.group("frames").Rects); got != tt.wantFrames {
				t.Errorf("got %d frames, want %d", got, tt.wantFrames)
			}
			if got := doc.text("footer"); got != tt.wantFooter {
				t.Errorf("got footer %q, want %q", got, tt.wantFooter)
			}
		})
	}
}

func TestErrorsAndEmpty(t *testing.T) {
	bad := []struct {
		name   string
		stacks []folded.Stack
		opts   Options
		want   string
	}{
		{name: "negative", stacks: stacksFrom("a;b 5", "a;c -1"), want: "negative value -1"},
		{name: "narrow", opts: Options{Width: 50}, want: "width below 200"},
		{name: "negative min width", opts: Options{MinFrameWidth: -1}, want: "negative"},
	}
	for _, tt := range bad {
		if err := Write(&bytes.Buffer{}, tt.stacks, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	_, doc := render(t, stacksFrom("a;b 0"), Options{})
	if got := len(doc.group("frames").Rects); got != 0 {
		t.Errorf("no samples: got %d frames, want none", got)
	}
	if got, want := doc.text("empty"), "No samples with a value of this type"; got != want {
		t.Errorf("no samples: got message %q, want %q", got, want)
	}
}

// largeStacks returns n random stacks shaped like a C++ server's
// profile: paths through a call tree of a few thousand functions with
// names of about nameLen bytes, 5 to 40 deep, with heavy-tailed values.
func largeStacks(n, nameLen int) []folded.Stack {
	rng := rand.New(rand.NewPCG(7, 11))
	funcs := make([]*folded.Frame, 3000)
	for i := range funcs {
		ns := fmt.Sprintf("product::module%02d::Component%03d", i%40, i%300)
		name := fmt.Sprintf("%s::method%d(std::vector<std::string> const&, int)", ns, i)
		name += strings.Repeat("<T>", max(0, nameLen-len(name))/3)
		funcs[i] = &folded.Frame{Name: name, Package: ns, Object: "server", JIT: i%10 == 0}
	}
	stacks := make([]folded.Stack, 0, n)
	for range n {
		depth := 5 + rng.IntN(36)
		s := folded.Stack{Value: int64(1e9 / (1 + rng.ExpFloat64()*rng.ExpFloat64()*1000))}
		f := 0
		for d := range depth {
			// Few choices near the root, many near the leaves.
			f = (f*31 + 7 + rng.IntN(1+d*d)) % len(funcs)
			s.Frames = append(s.Frames, funcs[f])
		}
		stacks = append(stacks, s)
	}
	return stacks
}

// TestLargeSize checks that 10^5 stacks make a file no larger than
// MaxSize, whatever the length of the names.
func TestLargeSize(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	tests := []struct {
		name    string
		nameLen int
		opts    Options
	}{
		{name: "default", nameLen: 80, opts: Options{Unit: "nanoseconds"}},
		{name: "long names", nameLen: 400, opts: Options{Unit: "nanoseconds"}},
		{name: "1 MB", nameLen: 80, opts: Options{Unit: "bytes", MaxSize: 1_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, doc := render(t, largeStacks(100_000, tt.nameLen), tt.opts)
			limit := cmp.Or(tt.opts.MaxSize, defaultMaxSize)
			t.Logf("10^5 stacks, names of %d bytes: %d bytes (limit %d); %s", tt.nameLen, len(data), limit, doc.text("footer"))
			if len(data) > limit {
				t.Errorf("got %d bytes, want at most %d", len(data), limit)
			}
			if len(data) < limit*8/10 {
				t.Errorf("got %d bytes, want the budget of %d used", len(data), limit)
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	stacks := largeStacks(100_000, 80)
	for b.Loop() {
		if err := Write(io.Discard, stacks, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
