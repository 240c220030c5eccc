package folded

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzWrite checks that any frame names make one well-formed folded
// line per stack.
func FuzzWrite(f *testing.F) {
	f.Add("main", "a;b\nc", int64(3))
	f.Add("\x00\xff\u0085", "", int64(-1))
	f.Fuzz(func(t *testing.T, a, b string, v int64) {
		if v == 0 {
			return
		}
		stack := Stack{Frames: []*Frame{{Name: a}, {Name: b}}, Value: v}
		var buf bytes.Buffer
		if err := Write(&buf, []Stack{stack}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("got %q, want one line", out)
		}
		frames := out[:strings.LastIndexByte(out, ' ')]
		if got := strings.Count(frames, ";"); got != 1 {
			t.Errorf("got %q with %d separators, want 1", out, got)
		}
		if !utf8.ValidString(frames) || strings.ContainsFunc(frames, unicode.IsControl) {
			t.Errorf("got %q, want valid UTF-8 without control characters", out)
		}
	})
}
