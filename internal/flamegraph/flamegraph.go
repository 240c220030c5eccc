// Package flamegraph draws stacks as a flame graph: one standalone,
// interactive SVG file, with no external script, font or network access.
//
// The root ("all") is at the bottom and callees stack upwards, as in
// Brendan Gregg's original flame graphs. Each frame is a rectangle whose
// width is proportional to its value, labelled with its name (cut with
// an ellipsis to fit) and coloured by its package or library: warm hues
// for native code, blue-green ones for JIT-compiled code, with a legend
// when there is any. Siblings are sorted by name; the gap to the right
// of a frame's children is its own (self) value.
//
// In a browser:
//   - hovering a frame shows its name, value in the sample unit,
//     percentage of the total and whether it is JIT-compiled or inlined,
//     as a tooltip and in the details line under the graph;
//   - clicking a frame zooms into it: it fills the width, its callees
//     are redrawn to scale, its callers stay visible, dimmed; "Reset
//     zoom", clicking the root or Esc zooms out;
//   - "Search" or Ctrl-F asks for a regular expression, highlights the
//     matching frames and shows the share of the total they cover
//     ("Matched: 12.3%"), counting nested matches once; "Clear" or Esc
//     clears it.
//
// Without scripts (an <img> tag, an image viewer) the graph still
// shows, with tooltips.
//
// Frames narrower than Options.MinFrameWidth are left out, with their
// callees, and so are the narrowest frames that would take the file over
// Options.MaxSize; the footer says how many and how much value that is.
// Searching sees only the frames drawn.
package flamegraph

import (
	"bufio"
	"errors"
	"io"

	"github.com/jitpprof/pprof/internal/folded"
)

// Options describe the graph. The zero value is usable.
type Options struct {
	// Title is the heading; "" means "Flame Graph".
	Title string
	// Subtitle is an optional second line, such as the profile's name.
	Subtitle string
	// SampleType names what the values are, such as "inuse_space" or
	// "cpu"; it is shown with the total.
	SampleType string
	// Unit is the unit of the values, as in a profile's sample type:
	// "bytes" (and "kilobytes" ...), "nanoseconds" (and "microseconds",
	// "milliseconds", "seconds"), "count" or anything else, shown as is.
	Unit string
	// Width is the width of the image in pixels; 0 means 1200. The graph
	// has a margin of 10 pixels on each side.
	Width int
	// MinFrameWidth is the width in pixels below which a frame is not
	// drawn; 0 means 0.1.
	MinFrameWidth float64
	// MaxSize bounds the size of the file in bytes: if drawing every
	// frame at least MinFrameWidth wide would take more, the narrowest
	// are left out. The bound holds, as the size is overestimated by
	// 10% to 20%. 0 means 3,000,000, room for about 12,000 frames with
	// C++ names of 80 characters.
	MaxSize int
}

// Defaults of Options.
const (
	defaultTitle         = "Flame Graph"
	defaultWidth         = 1200
	defaultMinFrameWidth = 0.1
	defaultMaxSize       = 3_000_000
)

// Layout, in pixels.
const (
	margin      = 10   // Left and right of the graph.
	rowHeight   = 16   // Distance between the rows of frames.
	frameHeight = 15   // Height of a frame; the rest is a gap.
	fontSize    = 12   // Of labels and most text.
	charWidth   = 7.2  // Advance of a monospace character at fontSize.
	labelPad    = 3    // Between a frame's left edge and its label.
	graphTop    = 60   // y of the top of the frames' area.
	maxGrid     = 1e9  // Largest coordinate in the frames' own units.
	minImgWidth = 200  // Smallest Width accepted.
	textBaseVal = 11.5 // Baseline of a label below its frame's top.
)

// Write draws stacks as an SVG flame graph and writes it to w. The
// stacks need not be sorted or distinct (folded.Stacks returns them
// sorted, which saves a sort); stacks with value 0 are skipped, and a
// negative value is an error.
//
// Its cost is linear in the total number of frames of the stacks, plus
// a sort of the frames wide enough to draw when they exceed MaxSize.
func Write(w io.Writer, stacks []folded.Stack, o Options) error {
	if o.Title == "" {
		o.Title = defaultTitle
	}
	if o.Width == 0 {
		o.Width = defaultWidth
	}
	if o.MinFrameWidth == 0 {
		o.MinFrameWidth = defaultMinFrameWidth
	}
	if o.MaxSize == 0 {
		o.MaxSize = defaultMaxSize
	}
	switch {
	case o.Width < minImgWidth:
		return errors.New("flame graph width below 200 pixels")
	case o.MinFrameWidth < 0 || o.MaxSize < 0:
		return errors.New("negative minimum frame width or maximum size")
	}
	t, err := buildTree(stacks)
	if err != nil {
		return err
	}
	budget := o.MaxSize - fixedCost()
	e := t.prune(float64(o.Width-2*margin), o.MinFrameWidth, budget, frameCost)
	bw := bufio.NewWriter(w)
	g := &graph{w: bw, o: o, t: t, elided: e}
	g.write()
	return bw.Flush()
}
