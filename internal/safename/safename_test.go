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

func TestEscape(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for _, tc := range []struct{ in, want string }{
		{"/tmp/jit/x.elf", "/tmp/jit/x.elf"},
		{"int App.hot(int[])", "int App.hot(int[])"},
		{"évidemment 日本", "évidemment 日本"},
		{long, long}, // never cut
		{"x\x1b[2Jy", `x\x1b[2Jy`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"line\nbreak\ttab", `line\nbreak\ttab`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"\x7f", `\x7f`},
		{"\xe2\x80", `\xe2\x80`}, // a cut rune: each byte
	} {
		got := Escape(tc.in)
		if got != tc.want {
			t.Errorf("Escape(%.40q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
		if !printable(got) {
			t.Errorf("Escape(%.40q) = %.80q is not printable", tc.in, got)
		}
	}
}
