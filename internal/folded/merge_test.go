package folded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// stacksOf parses "a;b;c 10" lines into sorted stacks of interned frames.
func stacksOf(t *testing.T, lines ...string) []Stack {
	t.Helper()
	frames := map[string]*Frame{}
	var out []Stack
	for _, l := range lines {
		path, v, _ := strings.Cut(l, " ")
		var value int64
		fmt.Sscan(v, &value)
		var s Stack
		for _, name := range strings.Split(path, ";") {
			if frames[name] == nil {
				frames[name] = &Frame{Name: name}
			}
			s.Frames = append(s.Frames, frames[name])
		}
		s.Value = value
		out = append(out, s)
	}
	slices.SortFunc(out, Compare)
	return out
}

// linesOf prints stacks as folded lines.
func linesOf(stacks []Stack) []string {
	var out []string
	for _, s := range stacks {
		var names []string
		for _, f := range s.Frames {
			names = append(names, f.Name)
		}
		out = append(out, fmt.Sprintf("%s %d", strings.Join(names, ";"), s.Value))
	}
	return out
}

func TestMerge(t *testing.T) {
	in := []string{"main;a 10", "main;b 1", "main;c -1", "main;d;e 1", "main 2"}
	for _, tc := range []struct {
		name   string
		limit  int
		want   []string
		merged Merged
	}{
		{name: "within the limit", limit: 6, want: []string{"main 2", "main;a 10", "main;b 1", "main;c -1", "main;d;e 1"}, merged: Merged{Of: 6}},
		{name: "the tail merged", limit: 2,
			want:   []string{"main 2", "main;[merged frames, each at most 6.7% of the total] 1", "main;a 10"},
			merged: Merged{Frames: 4, Of: 6, Most: 1, Total: 15, Name: "[merged frames, each at most 6.7% of the total]"}},
		// A tie at the limit: the frames of the value that does not fit
		// all go, never a callee without its caller.
		{name: "ties", limit: 3,
			want:   []string{"main 2", "main;[merged frames, each at most 6.7% of the total] 1", "main;a 10"},
			merged: Merged{Frames: 4, Of: 6, Most: 1, Total: 15, Name: "[merged frames, each at most 6.7% of the total]"}},
		{name: "all but the root", limit: 1,
			want:   []string{"main 2", "main;[merged frames, each at most 67% of the total] 11"},
			merged: Merged{Frames: 5, Of: 6, Most: 10, Total: 15, Name: "[merged frames, each at most 67% of the total]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, m := Merge(stacksOf(t, in...), tc.limit)
			if !slices.Equal(linesOf(got), tc.want) {
				t.Errorf("got %q, want %q", linesOf(got), tc.want)
			}
			if m != tc.merged {
				t.Errorf("got %+v, want %+v", m, tc.merged)
			}
		})
	}
}

// TestMergeBound: on random trees, the result keeps the total, is sorted,
// distinct, and has at most twice the limit of frames, and one merged
// frame at its root.
func TestMergeBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 50 {
		var lines []string
		for range 200 + rng.IntN(2000) {
			depth := 1 + rng.IntN(6)
			var path []string
			for d := range depth {
				path = append(path, fmt.Sprintf("f%d_%d", d, rng.IntN(3+d*d)))
			}
			lines = append(lines, fmt.Sprintf("%s %d", strings.Join(path, ";"), 1+rng.IntN(100)))
		}
		in := distinct(stacksOf(t, lines...))
		limit := 1 + rng.IntN(200)
		out, m := Merge(in, limit)
		var total, got int64
		for _, s := range in {
			total += s.Value
		}
		for _, s := range out {
			got += s.Value
		}
		if got != total {
			t.Fatalf("round %d: total %d, want %d", round, got, total)
		}
		if !slices.IsSortedFunc(out, Compare) {
			t.Fatalf("round %d: not sorted", round)
		}
		for i := 1; i < len(out); i++ {
			if Compare(out[i-1], out[i]) == 0 {
				t.Fatalf("round %d: stack %d repeated", round, i)
			}
		}
		_, after := Merge(out, 1<<30)
		if after.Of > 2*limit+1 || m.Of > limit && m.Frames == 0 {
			t.Fatalf("round %d: %d frames after merging %d of %d, limit %d", round, after.Of, m.Frames, m.Of, limit)
		}
	}
}

// distinct merges equal neighbours of sorted stacks, as Stacks makes them.
func distinct(stacks []Stack) []Stack {
	out := stacks[:0]
	for _, s := range stacks {
		if n := len(out); n > 0 && Compare(out[n-1], s) == 0 {
			out[n-1].Value += s.Value
			continue
		}
		out = append(out, s)
	}
	return out
}
