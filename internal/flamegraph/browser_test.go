package flamegraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/browsertest"
)

// frameBox is where a frame is on screen, from the browser.
type frameBox struct {
	X, Y, W, H float64
	Fill       string  // Computed fill, "rgb(r, g, b)".
	Opacity    float64 // Computed opacity.
}

// box returns the frame named name (the first, if several are), in
// CSS pixels; W is 0 for a hidden frame.
func box(t *testing.T, p *browsertest.Page, name string) frameBox {
	t.Helper()
	q, _ := json.Marshal(name)
	js := fmt.Sprintf(`(() => {
		const r = Array.from(document.querySelectorAll('#frames rect')).find(r => r.firstElementChild.textContent.split('\n')[0] === %s);
		const b = r.getBoundingClientRect(), s = getComputedStyle(r);
		return {X: b.x, Y: b.y, W: b.width, H: b.height, Fill: s.fill, Opacity: +s.opacity};
	})()`, q)
	b, err := browsertest.EvalAs[frameBox](p, js)
	if err != nil {
		t.Fatalf("finding frame %s: %v", name, err)
	}
	return b
}

// textOf returns the text of the element with the given id.
func textOf(t *testing.T, p *browsertest.Page, id string) string {
	t.Helper()
	s, err := browsertest.EvalAs[string](p, fmt.Sprintf("document.getElementById(%q).textContent", id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// near reports whether a and b differ by at most half a pixel.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.5 }

// rgb parses a computed colour "rgb(r, g, b)".
func rgb(t *testing.T, s string) [3]int {
	t.Helper()
	var c [3]int
	if _, err := fmt.Sscanf(s, "rgb(%d, %d, %d)", &c[0], &c[1], &c[2]); err != nil {
		t.Fatalf("parsing colour %q: %v", s, err)
	}
	return c
}

// bandFilled returns how many pixels of row y of img, from x0 to x1
// (excluded), have colour c.
func bandFilled(img image.Image, y, x0, x1 int, c [3]int) int {
	n := 0
	for x := x0; x < x1; x++ {
		r, g, b, _ := img.At(x, y).RGBA()
		if abs(int(r>>8)-c[0]) <= 2 && abs(int(g>>8)-c[1]) <= 2 && abs(int(b>>8)-c[2]) <= 2 {
			n++
		}
	}
	return n
}

func abs(x int) int { return max(x, -x) }

func screenshot(t *testing.T, p *browsertest.Page) image.Image {
	t.Helper()
	data, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestBrowser opens the graph in headless Chromium and uses it with
// real mouse events: zoom, reset, search (through the prompt).
func TestBrowser(t *testing.T) {
	var svg bytes.Buffer
	if err := Write(&svg, sampleStacks(), Options{SampleType: "inuse_space", Unit: "bytes"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(svg.Bytes())
	}))
	defer srv.Close()

	b := browsertest.Start(t)
	p := b.NewPage(t)
	if err := p.SetViewport(1200, 300); err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(srv.URL + "/flame.svg"); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor("typeof flamegraph === 'object'", 5*time.Second); err != nil {
		t.Fatalf("the script did not run: %v", err)
	}

	const full = 1200 - 2*margin
	const handle = "app::Server::handle(Request&)"
	before := box(t, p, handle)
	if want := full * 4718592.0 / 9977857; !near(before.W, want) {
		t.Errorf("%s before zooming: got width %.2f, want %.2f", handle, before.W, want)
	}

	// Zoom with a real click.
	if err := p.Click(before.X+before.W/2, before.Y+before.H/2); err != nil {
		t.Fatal(err)
	}
	if got, want := textOf(t, p, "details"), handle+"  |  4.50 MiB (4,718,592 B), 47.29%  |  in app"; got != want {
		t.Errorf("got details %q, want %q", got, want)
	}
	if err := p.Hover(5, 295); err != nil { // Away, so that no outline is drawn.
		t.Fatal(err)
	}
	zoomed := box(t, p, handle)
	checks := []struct {
		name        string
		got         frameBox
		wantX       float64
		wantW       float64
		wantOpacity float64
	}{
		{name: "zoomed " + handle, got: zoomed, wantX: margin, wantW: full, wantOpacity: 1},
		{name: "caller app::Server::run()", got: box(t, p, "app::Server::run()"), wantX: margin, wantW: full, wantOpacity: 0.55},
		{name: "root", got: box(t, p, "all"), wantX: margin, wantW: full, wantOpacity: 0.55},
		{name: "callee push_back", got: box(t, p, "std::vector<int, std::allocator<int> >::push_back(int const&)"), wantX: margin + full*1048576.0/4718592, wantW: full * 3145728.0 / 4718592, wantOpacity: 1},
		{name: "unrelated app::Cache::refresh()", got: box(t, p, "app::Cache::refresh()"), wantW: 0},
	}
	for _, c := range checks {
		if !near(c.got.W, c.wantW) || (c.wantW > 0 && (!near(c.got.X, c.wantX) || c.got.Opacity != c.wantOpacity)) {
			t.Errorf("%s: got x %.2f width %.2f opacity %g, want x %.2f width %.2f opacity %g",
				c.name, c.got.X, c.got.W, c.got.Opacity, c.wantX, c.wantW, c.wantOpacity)
		}
	}
	if got := textOf(t, p, "details"); got != hint {
		t.Errorf("got details %q after the mouse left, want the hint", got)
	}

	// The zoomed frame's colour fills a band across the whole graph,
	// and the margins stay white.
	img := screenshot(t, p)
	colour := rgb(t, zoomed.Fill)
	y := int(zoomed.Y) + 1 // Above the label.
	if got := bandFilled(img, y, margin, margin+full, colour); got != full {
		t.Errorf("screenshot row %d: got %d pixels of %v, want the whole %d", y, got, colour, full)
	}
	if got := bandFilled(img, y, 0, margin, [3]int{255, 255, 255}); got != margin {
		t.Errorf("screenshot row %d: got %d white pixels in the margin, want %d", y, got, margin)
	}

	// Search through the button and its prompt.
	p.OnDialog(func(d browsertest.Dialog) (bool, string) { return true, "^malloc$" })
	if err := p.Click(1200-margin-20, 20); err != nil { // "Search", top right.
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.getElementById('matched').textContent === 'Matched: 39.4%'`, 5*time.Second); err != nil {
		t.Errorf("%v (matched %q)", err, textOf(t, p, "matched"))
	}
	malloc := box(t, p, "malloc")
	if got, want := rgb(t, malloc.Fill), [3]int{230, 0, 230}; got != want {
		t.Errorf("matched malloc: got fill %v, want %v", got, want)
	}
	img = screenshot(t, p)
	my := int(malloc.Y) + 1
	if got, want := bandFilled(img, my, int(malloc.X)+1, int(malloc.X+malloc.W)-1, [3]int{230, 0, 230}), int(malloc.W)-2; got < want {
		t.Errorf("screenshot: got %d highlighted pixels in malloc's row, want %d", got, want)
	}

	// Nested matches count once: handle() is inside run().
	for _, tt := range []struct{ re, want string }{
		{re: "app::Server", want: "Matched: 78.8%"},
		{re: "^std::", want: "Matched: 47.3%"},
		{re: "(", want: "Invalid regular expression"},
	} {
		if _, err := p.Eval(fmt.Sprintf("flamegraph.search(%q)", tt.re)); err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, p, "matched"); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
			t.Errorf("search %q: got %q, want %q", tt.re, got, tt.want)
		}
	}

	// Reset with the control.
	if err := p.Click(margin+20, 20); err != nil { // "Reset zoom", top left.
		t.Fatal(err)
	}
	if after := box(t, p, handle); !near(after.W, before.W) || !near(after.X, before.X) {
		t.Errorf("after reset: got x %.2f width %.2f, want %.2f and %.2f", after.X, after.W, before.X, before.W)
	}
}
