package folded

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// DefaultMaxFrames is the most frames jitpprof's folded stacks and flame
// graphs keep of a profile's call tree (its distinct stack prefixes):
// more than a flame graph can show (it draws a few thousand) and than a
// reader of folded stacks wants, far fewer than a profile of 300,000
// distinct functions has.
const DefaultMaxFrames = 100_000

// Merged says what Merge merged.
type Merged struct {
	Frames int    // frames of the call tree merged, 0 if none
	Of     int    // frames of the call tree in all
	Most   int64  // the largest value of a frame merged
	Total  int64  // the total of the values (absolute)
	Name   string // the merged frames' name
}

// Merge keeps at most limit frames of the call tree that stacks make (a
// frame is a distinct prefix of one or more stacks; its value is the sum
// of their absolute values), as pprof's -nodefraction drops the nodes
// below a fraction of the total: if there are more, the frames of the
// smallest values are merged, and each stack is cut at its first frame
// merged, the rest replaced by one frame named after the value of the
// largest frame merged ("[merged frames, each at most 0.0003% of the
// total]"). So a frame kept has at most one merged frame under it (and
// the stacks one at their root), the values are all kept, and the result
// has at most 2*limit+1 frames. stacks
// must be sorted as Stacks returns them, and the result is sorted so.
// Stacks that need no merging are returned as they are.
//
// Its cost is linear in the total number of frames of the stacks, plus a
// sort of the frames' values when there are more than limit.
func Merge(stacks []Stack, limit int) ([]Stack, Merged) {
	var m Merged
	// The tree's frames in the order they are met, each's value.
	var values []int64
	walk(stacks, func(i, depth int, node int32, isNew bool) {
		if isNew {
			values = append(values, 0)
		}
		values[node] += abs(stacks[i].Value)
	})
	m.Of = len(values)
	if len(values) <= limit {
		return stacks, m
	}
	for _, s := range stacks {
		m.Total += abs(s.Value)
	}
	// Keep the values above the first that does not fit: a frame is
	// never kept without its caller, whose value is as large.
	sorted := slices.Clone(values)
	slices.SortFunc(sorted, func(a, b int64) int { return cmp.Compare(b, a) })
	threshold := sorted[limit]
	merged := &Frame{Name: mergedName(threshold, m.Total)}
	m.Name = merged.Name
	for _, v := range values {
		if v <= threshold {
			m.Frames++
			m.Most = max(m.Most, v)
		}
	}
	cut := make([]int, len(stacks)) // the depth where each stack is cut
	for i := range cut {
		cut[i] = len(stacks[i].Frames)
	}
	walk(stacks, func(i, depth int, node int32, _ bool) {
		if values[node] <= threshold && depth < cut[i] {
			cut[i] = depth
		}
	})
	out := make([]Stack, 0, len(stacks))
	for i, s := range stacks {
		if cut[i] < len(s.Frames) {
			frames := append(slices.Clip(s.Frames[:cut[i]]), merged)
			s = Stack{Frames: frames, Value: s.Value}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, Compare)
	// Stacks cut at the same frame are one now.
	k := 0
	for i := range out {
		if k > 0 && Compare(out[k-1], out[i]) == 0 {
			out[k-1].Value += out[i].Value
			continue
		}
		out[k] = out[i]
		k++
	}
	return slices.DeleteFunc(out[:k], func(s Stack) bool { return s.Value == 0 }), m
}

// walk calls fn for each frame of each stack, in order, with the index of
// the stack, the depth of the frame in it and the frame's node in the
// call tree, told apart by the prefixes they end (stacks sorted as
// Stacks returns them share their prefixes with their neighbours):
// isNew for its first stack.
func walk(stacks []Stack, fn func(i, depth int, node int32, isNew bool)) {
	var path []int32 // the current stack's node at each depth
	var prev []*Frame
	n := int32(0)
	for i := range stacks {
		s := &stacks[i]
		k := commonPrefix(prev, s.Frames)
		path = path[:k]
		for d := range s.Frames {
			if d >= k {
				path = append(path, n)
				n++
			}
			fn(i, d, path[d], d >= k)
		}
		prev = s.Frames
	}
}

// commonPrefix returns how many leading frames a and b share.
func commonPrefix(a, b []*Frame) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] && *a[i] != *b[i] {
			return i
		}
	}
	return n
}

// mergedName names the frames Merge makes, each of which stands for
// frames of at most most of a total of total.
func mergedName(most, total int64) string {
	pct := 100 * float64(most) / float64(max(total, 1))
	return fmt.Sprintf("[merged frames, each at most %s%% of the total]", strconv.FormatFloat(pct, 'g', 2, 64))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
