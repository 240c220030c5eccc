package flamegraph

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/jitpprof/pprof/internal/folded"
)

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    int64
		unit string
		want string
	}{
		{v: 0, unit: "bytes", want: "0 B"},
		{v: 1023, unit: "bytes", want: "1,023 B"},
		{v: 1536, unit: "bytes", want: "1.50 KiB (1,536 B)"},
		{v: 3 << 20, unit: "bytes", want: "3.00 MiB (3,145,728 B)"},
		{v: 5 << 40, unit: "bytes", want: "5.00 TiB (5,497,558,138,880 B)"},
		{v: 1536, unit: "megabytes", want: "1.50 GiB (1,536 MiB)"},
		{v: 12, unit: "kilobytes", want: "12 KiB"},
		{v: 0, unit: "nanoseconds", want: "0 s"},
		{v: 999, unit: "nanoseconds", want: "999 ns"},
		{v: 1500, unit: "nanoseconds", want: "1.5 µs"},
		{v: 12_345_678, unit: "nanoseconds", want: "12.3 ms"},
		{v: 1_234_567_890, unit: "nanoseconds", want: "1.23 s"},
		{v: 90_000_000_000, unit: "nanoseconds", want: "1.5 min"},
		{v: 7200, unit: "seconds", want: "2 h"},
		{v: 250, unit: "microseconds", want: "250 µs"},
		{v: 1234567, unit: "count", want: "1,234,567"},
		{v: -1234, unit: "", want: "-1,234"},
		{v: 42, unit: "cycles", want: "42 cycles"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%d, %q): got %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		name   string
		width  float64
		want   string
		wantOK bool
	}{
		{name: "main", width: 100, want: "main", wantOK: true},
		{name: "main", width: 6 + 4*charWidth, want: "main", wantOK: true},
		{name: "main", width: 6 + 3*charWidth, want: "ma…", wantOK: true},
		{name: "main", width: 6 + 3*charWidth - 0.01, wantOK: false},
		{name: "日本語の関数", width: 6 + 4*charWidth, want: "日本語…", wantOK: true},
	}
	for _, tt := range tests {
		got, ok := fit(tt.name, tt.width)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("fit(%q, %g): got %q, %v, want %q, %v", tt.name, tt.width, got, ok, tt.want, tt.wantOK)
		}
	}
}

// hue returns the hue in degrees of a colour #rrggbb.
func hue(t *testing.T, c string) float64 {
	t.Helper()
	v, err := strconv.ParseUint(c[1:], 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	r, g, b := float64(v>>16)/255, float64(v>>8&0xff)/255, float64(v&0xff)/255
	hi, lo := max(r, g, b), min(r, g, b)
	var h float64
	switch {
	case hi == lo:
		return 0
	case hi == r:
		h = math.Mod((g-b)/(hi-lo), 6)
	case hi == g:
		h = (b-r)/(hi-lo) + 2
	default:
		h = (r-g)/(hi-lo) + 4
	}
	return math.Mod(h*60+360, 360)
}

func TestColour(t *testing.T) {
	for i := range 200 {
		name := "pkg" + strconv.Itoa(i) + "::f()"
		native := colour(&folded.Frame{Name: name, Package: "pkg" + strconv.Itoa(i)})
		jit := colour(&folded.Frame{Name: name, Package: "pkg" + strconv.Itoa(i), JIT: true})
		if h := hue(t, native); h > 52 {
			t.Errorf("native %s: got %s, hue %.0f, want a warm hue (0 to 50)", name, native, h)
		}
		if h := hue(t, jit); h < 178 || h > 232 {
			t.Errorf("JIT %s: got %s, hue %.0f, want a blue-green hue (180 to 230)", name, jit, h)
		}
	}
	a := colour(&folded.Frame{Name: "a", Package: "p"})
	if b := colour(&folded.Frame{Name: "a", Package: "p"}); a != b {
		t.Errorf("got colours %s and %s for equal frames, want one", a, b)
	}
}

// TestTreeOrder checks that the order of the stacks and the identity of
// equal frames do not change the graph.
func TestTreeOrder(t *testing.T) {
	sorted := sampleStacks()
	slices.SortFunc(sorted, folded.Compare)
	shuffled := slices.Clone(sorted)
	slices.Reverse(shuffled)
	// Equal frames that are different *Frames.
	copied := make([]folded.Stack, len(sorted))
	for i, s := range sorted {
		copied[i].Value = s.Value
		for _, f := range s.Frames {
			c := *f
			copied[i].Frames = append(copied[i].Frames, &c)
		}
	}
	var want bytes.Buffer
	if err := Write(&want, sorted, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, stacks := range map[string][]folded.Stack{"reversed": shuffled, "copied frames": copied} {
		var got bytes.Buffer
		if err := Write(&got, stacks, Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: got a different SVG, want the same", name)
		}
	}
}
