package flamegraph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/jitpprof/pprof/internal/folded"
)

// node is a frame of the flame graph: one prefix of one or more stacks.
type node struct {
	frame  *folded.Frame // nil for the root.
	parent int32         // Index in tree.nodes; -1 for the root.
	depth  int32         // 0 for the root.
	value  int64         // Sum of the values of the stacks through here.
	start  int64         // Sum of the values to the left at this depth.
	kept   bool          // Wide enough to draw.
}

// tree is the merged call tree, nodes in depth-first order (parents
// before children, siblings in the stacks' order), the root first.
type tree struct {
	nodes    []node
	maxDepth int32
}

// buildTree merges stacks into a tree. Stacks with value 0 are skipped;
// a negative value is an error, as a flame graph cannot show it.
//
// Children are laid out left to right in the order of folded.Compare;
// a frame's own value (samples ending in it) is the gap at its right.
func buildTree(stacks []folded.Stack) (*tree, error) {
	if !slices.IsSortedFunc(stacks, folded.Compare) {
		stacks = slices.Clone(stacks)
		slices.SortFunc(stacks, folded.Compare)
	}
	size := 1 // An upper bound on the number of nodes, to allocate once.
	for _, s := range stacks {
		size += len(s.Frames)
	}
	t := &tree{nodes: make([]node, 1, size)}
	t.nodes[0].parent = -1
	path := []int32{0}       // Node of the current stack at each depth.
	childSum := []int64{0}   // Sum of the values of path[d]'s children so far.
	var prev []*folded.Frame // The frames of the previous stack.
	for _, s := range stacks {
		if s.Value < 0 {
			return nil, fmt.Errorf("stack with negative value %d: a flame graph cannot show negative values (a -diff_base profile?)", s.Value)
		}
		if s.Value == 0 || len(s.Frames) == 0 {
			continue
		}
		if t.nodes[0].value > maxInt64-s.Value {
			return nil, fmt.Errorf("the values add up to more than %d", int64(maxInt64))
		}
		k := commonPrefix(prev, s.Frames)
		path, childSum = path[:k+1], childSum[:k+1]
		for _, f := range s.Frames[k:] {
			parent := path[len(path)-1]
			t.nodes = append(t.nodes, node{
				frame:  f,
				parent: parent,
				depth:  int32(len(path)),
				start:  t.nodes[parent].start + childSum[len(path)-1],
			})
			path = append(path, int32(len(t.nodes)-1))
			childSum = append(childSum, 0)
		}
		for d, i := range path {
			t.nodes[i].value += s.Value
			if d > 0 {
				childSum[d-1] += s.Value
			}
		}
		t.maxDepth = max(t.maxDepth, int32(len(s.Frames)))
		prev = s.Frames
	}
	return t, nil
}

const maxInt64 = 1<<63 - 1

// commonPrefix returns how many leading frames a and b share.
func commonPrefix(a, b []*folded.Frame) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] && *a[i] != *b[i] {
			return i
		}
	}
	return n
}

// elided sums up the frames prune left out.
type elided struct {
	frames   int     // How many.
	value    int64   // Their value, each sample counted once.
	maxWidth float64 // None is wider than this, in pixels.
}

// prune marks the nodes to draw: those at least minWidth pixels wide in
// a graph width pixels wide, and of these the widest whose costs (as
// estimated by cost) add up to at most budget. A kept node's parent is
// always kept, being at least as wide.
func (t *tree) prune(width, minWidth float64, budget int, cost func(n *node, px float64) int) elided {
	total := t.nodes[0].value
	if total == 0 {
		t.nodes[0].kept = true
		return elided{}
	}
	px := width / float64(total) // Pixels per unit of value.
	var kept []int32
	spent := 0
	for i := range t.nodes {
		n := &t.nodes[i]
		n.kept = i == 0 || float64(n.value)*px >= minWidth
		if n.kept {
			kept = append(kept, int32(i))
			spent += cost(n, px)
		}
	}
	e := elided{maxWidth: minWidth}
	if spent > budget {
		// Spend the budget on the widest frames first. Keep only values
		// above the first that does not fit, so that ties cannot take the
		// cost over budget, and parents (as wide as their children, or
		// wider, and before them in case of a tie) stay.
		slices.SortStableFunc(kept, func(a, b int32) int {
			return cmp.Compare(t.nodes[b].value, t.nodes[a].value)
		})
		spent = 0
		threshold := int64(-1)
		for _, i := range kept {
			if spent += cost(&t.nodes[i], px); spent > budget {
				threshold = t.nodes[i].value
				break
			}
		}
		for _, i := range kept {
			if n := &t.nodes[i]; i != 0 && n.value <= threshold {
				n.kept = false
			}
		}
		e.maxWidth = max(minWidth, float64(threshold)*px)
	}
	t.maxDepth = 0
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		switch {
		case n.kept:
			t.maxDepth = max(t.maxDepth, n.depth)
		case t.nodes[n.parent].kept:
			e.frames++
			e.value += n.value
		default:
			e.frames++
		}
	}
	return e
}
