package flamegraph

import (
	"bufio"
	_ "embed"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jitpprof/pprof/internal/folded"
)

// script is the JavaScript of the interactive graph; style its CSS,
// which the frames' colour classes follow.
var (
	//go:embed flamegraph.js
	script string
	//go:embed flamegraph.css
	style string
)

// Colours of the root and of the legend's swatches.
const (
	rootColour   = "#c9c4bd"
	nativeSwatch = "#e8773a"
	jitSwatch    = "#3f9fc9"
)

// graph writes one flame graph.
type graph struct {
	w      *bufio.Writer
	o      Options
	t      *tree
	elided elided
}

func (g *graph) write() {
	w, o, nodes := g.w, g.o, g.t.nodes
	total := nodes[0].value
	inner := float64(o.Width - 2*margin)
	bottom := graphTop + int(g.t.maxDepth+1)*rowHeight
	height := bottom + 44

	// Frame coordinates are in units of value, or of total/maxGrid if
	// total is larger, so that they stay exact integers in JavaScript;
	// a scale transform maps them to pixels. Rounding down is monotone,
	// so children stay within their parents.
	grid := min(total, maxGrid)
	q := func(v int64) int64 {
		if total <= maxGrid {
			return v
		}
		return int64(float64(v) / float64(total) * maxGrid)
	}

	// Colour classes, in order of first use.
	classes := map[string]int{}
	var colours []string
	class := make([]int, len(nodes))
	jit := false
	for i, n := range nodes {
		if !n.kept {
			continue
		}
		c := rootColour
		if n.frame != nil {
			c = colour(n.frame)
			jit = jit || n.frame.JIT
		}
		k, ok := classes[c]
		if !ok {
			k = len(colours)
			classes[c] = k
			colours = append(colours, c)
		}
		class[i] = k
	}

	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n")
	fmt.Fprintf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "+
		"data-margin=\"%d\" data-width=\"%g\" data-grid=\"%d\" data-charw=\"%g\" data-pad=\"%d\" data-base=\"%g\">\n",
		o.Width, height, o.Width, height, margin, inner, grid, charWidth, labelPad, textBaseVal)
	fmt.Fprintf(w, "<style><![CDATA[\n%s", style)
	for k, c := range colours {
		fmt.Fprintf(w, ".c%d{fill:%s}\n", k, c)
	}
	fmt.Fprintf(w, "]]></style>\n")
	fmt.Fprintf(w, "<rect id=\"background\" width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n")
	g.text("title", "", float64(o.Width)/2, 24, o.Title)
	sub := "Total: " + formatValue(total, o.Unit)
	if o.SampleType != "" {
		sub = o.SampleType + ": " + formatValue(total, o.Unit)
	}
	if o.Subtitle != "" {
		sub += " · " + o.Subtitle
	}
	g.text("subtitle", "", margin, 44, sub)
	g.text("reset", "button off", margin, 24, "Reset zoom")
	g.text("search", "button", float64(o.Width-margin), 24, "Search")
	g.text("clear", "button off", float64(o.Width-margin)-7*charWidth-16, 24, "Clear")
	if jit {
		g.legend(float64(o.Width-margin), 44)
	}

	fmt.Fprintf(w, "<g id=\"frames\" transform=\"translate(%d,0) scale(%s,1)\">\n", margin, strconv.FormatFloat(inner/float64(max(grid, 1)), 'g', -1, 64))
	for i, n := range nodes {
		if !n.kept || total == 0 {
			continue
		}
		x := q(n.start)
		fmt.Fprintf(w, "<rect class=\"c%d\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"><title>", class[i], x, g.rowY(n.depth), q(n.start+n.value)-x, frameHeight)
		g.tooltip(n, total)
		w.WriteString("</title></rect>\n")
	}
	w.WriteString("</g>\n<g id=\"labels\">\n")
	for _, n := range nodes {
		if !n.kept || total == 0 {
			continue
		}
		x0 := float64(q(n.start)) / float64(grid) * inner
		x1 := float64(q(n.start+n.value)) / float64(grid) * inner
		name := "all"
		if n.frame != nil {
			name = n.frame.Name
		}
		if label, ok := fit(clean(name), x1-x0); ok {
			g.text("", "", margin+x0+labelPad, float64(g.rowY(n.depth))+textBaseVal, label)
		}
	}
	w.WriteString("</g>\n")
	if total == 0 {
		g.text("empty", "", float64(o.Width)/2, graphTop+12, "No samples with a value of this type")
	}
	g.text("details", "", margin, float64(bottom+18), hint)
	g.text("matched", "", float64(o.Width-margin), float64(bottom+18), "")
	g.text("footer", "", margin, float64(bottom+34), g.footer())
	fmt.Fprintf(w, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script)
}

// fixedCost returns a bound on the bytes of the SVG besides its frames
// and their labels.
func fixedCost() int { return len(script) + len(style) + 4000 }

// frameCost estimates the bytes a frame adds to the SVG when px pixels
// stand for one unit of value: its rectangle, tooltip and colour class,
// and its label if it is wide enough for one.
func frameCost(n *node, px float64) int {
	c := 150
	if f := n.frame; f != nil {
		name := escapedLen(f.Name)
		c += name + len(f.Object)
		if w := float64(n.value) * px; w >= 3*charWidth+2*labelPad {
			c += 40 + min(name, int(w/charWidth)*2) // Cut to the width; escapes.
		}
	}
	return c
}

// escapedLen returns the length of s escaped by writeEscaped.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>':
			n += 3
		case '&':
			n += 4
		case '"':
			n += 5
		}
	}
	return n
}

// hint is the details line when no frame is hovered.
const hint = "Hover over a frame for details, click to zoom; Search or Ctrl-F to find frames; Esc resets."

// rowY returns the y of the top of the frames at depth d.
func (g *graph) rowY(d int32) int {
	return graphTop + int(g.t.maxDepth-d)*rowHeight
}

// text writes a <text> element; id and class may be empty.
func (g *graph) text(id, class string, x, y float64, s string) {
	w := g.w
	w.WriteString("<text")
	if id != "" {
		w.WriteString(` id="` + id + `"`)
	}
	if class != "" {
		w.WriteString(` class="` + class + `"`)
	}
	fmt.Fprintf(w, " x=\"%s\" y=\"%s\">", coord(x), coord(y))
	writeEscaped(w, clean(s))
	w.WriteString("</text>\n")
}

// coord prints a pixel coordinate with at most two decimals.
func coord(x float64) string {
	return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
}

// legend writes the swatches of native and JIT code, ending at x.
func (g *graph) legend(x, y float64) {
	const native, jit = "native", "JIT-compiled"
	x -= float64(len(native)+len(jit))*charWidth + 2*14 + 12
	for _, e := range []struct{ colour, label string }{{nativeSwatch, native}, {jitSwatch, jit}} {
		fmt.Fprintf(g.w, "<rect class=\"swatch\" x=\"%s\" y=\"%s\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", coord(x), coord(y-9), e.colour)
		g.text("", "legend", x+14, y, e.label)
		x += 14 + float64(len(e.label))*charWidth + 12
	}
}

// tooltip writes the text of a frame's <title>: its name, its value and
// share of the total, and what kind of code it is.
func (g *graph) tooltip(n node, total int64) {
	w := g.w
	name := "all"
	if n.frame != nil {
		name = n.frame.Name
	}
	writeEscaped(w, clean(name))
	w.WriteString("\n")
	writeEscaped(w, clean(formatValue(n.value, g.o.Unit)+", "+percent(n.value, total)))
	f := n.frame
	if f == nil {
		return
	}
	var kind []string
	switch {
	case f.JIT:
		kind = append(kind, "JIT-compiled code in "+f.Object)
	case f.Object != "":
		kind = append(kind, "in "+f.Object)
	}
	if f.Inlined {
		kind = append(kind, "inlined")
	}
	if len(kind) > 0 {
		w.WriteString("\n")
		writeEscaped(w, clean(strings.Join(kind, ", ")))
	}
}

// footer says what was left out.
func (g *graph) footer() string {
	e := g.elided
	drawn := 0
	for _, n := range g.t.nodes {
		if n.kept {
			drawn++
		}
	}
	s := plural(drawn, "frame") + " drawn"
	if e.frames > 0 {
		total := g.t.nodes[0].value
		s += fmt.Sprintf("; %s of at most %s px not drawn: %s, %s of the total",
			plural(e.frames, "frame"), trim(e.maxWidth), formatValue(e.value, g.o.Unit), percent(e.value, total))
	}
	return s + "."
}

// plural returns "1 frame", "2 frames", "1,000 frames".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return group(int64(n)) + " " + noun + "s"
}

// fit returns name cut to fit a frame width pixels wide, with an
// ellipsis if it had to be cut, and false if not even three characters
// fit. The script does the same with the measured character width.
func fit(name string, width float64) (string, bool) {
	n := int((width-2*labelPad)/charWidth + 1e-9) // Spare 4*7.2 rounding down.
	if n < 3 {
		return "", false
	}
	if utf8.RuneCountInString(name) <= n {
		return name, true
	}
	r := []rune(name)
	return string(r[:n-1]) + "…", true
}

// clean replaces the characters XML 1.0 cannot carry: control characters
// (newlines and tabs too, as names are one line) become spaces; invalid
// UTF-8, U+FFFE and U+FFFF become U+FFFD.
func clean(s string) string {
	ok := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0xfffe || r == 0xffff
	})
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s { // Invalid UTF-8 comes as U+FFFD.
		switch {
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			b.WriteByte(' ')
		case r == 0xfffe || r == 0xffff:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeEscaped writes s, clean, as XML text or attribute value.
func writeEscaped(w *bufio.Writer, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		default:
			continue
		}
		w.WriteString(s[last:i])
		w.WriteString(esc)
		last = i + 1
	}
	w.WriteString(s[last:])
}

// colour returns the fill of a frame: a hue picked by a hash of its
// package (of its name if it has none), warm for native code and
// blue-green for JIT code, with the lightness nudged by a hash of its
// name so that neighbours from one package stay apart.
func colour(f *folded.Frame) string {
	key := f.Package
	if key == "" {
		key = f.Name
	}
	h, n := hash(key), hash(f.Name)
	hue, sat, light := float64(h%50), 72+float64(h>>8%20), 55+float64(h>>16%8)
	if f.JIT {
		hue, sat, light = 180+float64(h%50), 50+float64(h>>8%20), 52+float64(h>>16%10)
	}
	light += float64(n%4)*2 - 3
	return hsl(hue, sat/100, light/100)
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// hsl converts a colour from hue (degrees), saturation and lightness
// (0 to 1) to #rrggbb.
func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}
