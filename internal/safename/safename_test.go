package safename

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for _, tc := range []struct{ in, want string }{
		{"/tmp/jit/x.elf", "/tmp/jit/x.elf"},
		{".text._Z3foov", ".text._Z3foov"},
		{"a b (c)", "a b (c)"},
		{"évidemment", "évidemment"},
		{"x\x1b[2Jy", `"x\x1b[2Jy"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"line\nbreak", `"line\nbreak"`},
		{long, long[:192] + "…(744 bytes)…" + long[:64]},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%.40q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
	}
}
