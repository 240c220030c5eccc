// Package safename makes names that come from files (paths, section
// names, symbol names) safe to print in a message: a name with control
// characters or invalid UTF-8 is quoted, Go style, so that nothing
// reaches the terminal raw, and a very long one is cut in the middle.
// Names that go into a profile, which reports print as they are, are
// made safe by Escape, which changes nothing else.
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

// Escape returns s with each character that is not printable (control
// characters: escape sequences, bells, line breaks, tabs; and the like)
// and each byte of invalid UTF-8 written as its Go escape (\x1b,
// \u0085, \xff), without quotes: a name made safe to put in a profile,
// whose reports print names as they are. A printable name is returned
// unchanged, however long, so that names made so stay the names they
// were wherever they are printable.
func Escape(s string) string {
	if printable(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b = append(b, `\x`...)
			b = append(b, hex[s[i]>>4], hex[s[i]&15])
		case unicode.IsPrint(r):
			b = append(b, s[i:i+n]...)
		default:
			b = append(b, strconv.QuoteRuneToASCII(r)[1:len(strconv.QuoteRuneToASCII(r))-1]...)
		}
		i += n
	}
	return string(b)
}

const hex = "0123456789abcdef"

func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
