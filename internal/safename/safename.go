// Package safename makes names that come from files (paths, section
// names, symbol names) safe to print in a message: a name with control
// characters or invalid UTF-8 is quoted, Go style, so that nothing
// reaches the terminal raw, and a very long one is cut in the middle.
package safename

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest name printed whole; a longer one keeps its first
// and last bytes around an ellipsis.
const MaxLen = 256

// String returns s as it may be printed: unchanged if it is printable
// text of at most MaxLen bytes, else cut and, if it holds anything not
// printable, quoted.
func String(s string) string {
	cut := s
	if len(s) > MaxLen {
		head, tail := s[:MaxLen*3/4], s[len(s)-MaxLen/4:]
		cut = head + "…(" + strconv.Itoa(len(s)-len(head)-len(tail)) + " bytes)…" + tail
	}
	if printable(cut) {
		return cut
	}
	return strconv.Quote(cut)
}

func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
