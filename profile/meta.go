package profile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/jitpprof/pprof/internal/safename"
)

// A Section is one section of a JIT object as loaded in the profiled
// process: the bytes [Start, Start+Size) of its address space.
type Section struct {
	Name  string // section name, such as ".text._Z3foov"
	Start uint64 // run-time load address; 0 means the section was not loaded
	Size  uint64 // size in bytes
}

// Limit returns the first address after the section.
func (s Section) Limit() uint64 { return s.Start + s.Size }

// Contains reports whether addr lies in [s.Start, s.Limit()).
func (s Section) Contains(addr uint64) bool { return s.Start <= addr && addr-s.Start < s.Size }

// metaSection is one entry of the "sections" list of a NAME.meta file.
// encoding/json matches keys case-insensitively, so "name", "Name" and
// "NAME" are all accepted.
type metaSection struct {
	Name  *metaName
	Start *uint64
	Size  *uint64
}

// A metaName is a section name as a .meta file spells it, byte for byte.
type metaName string

// UnmarshalJSON decodes the JSON string data keeping the bytes that are
// not UTF-8: section names are bytes, which the dump listener and jitsnap
// write as they are, and encoding/json would turn each such byte into
// U+FFFD, so that the name no longer matched its section in the ELF
// file. Escapes are decoded as encoding/json decodes them (a lone
// surrogate is U+FFFD).
func (n *metaName) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		tok, _ := json.NewDecoder(bytes.NewReader(data)).Token()
		return fmt.Errorf("name is %s, not a string", tokenKind(tok))
	}
	in := data[1 : len(data)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i == len(in) {
			return errors.New("name ends in a backslash")
		}
		switch c = in[i]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in[i+1:])
			if !ok {
				return errors.New("name has a malformed \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+2 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
					r2, ok = hex4(in[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return fmt.Errorf("name has an invalid escape \\%c", c)
		}
	}
	*n = metaName(out)
	return nil
}

// hex4 returns the number the four hexadecimal digits at the start of b
// spell.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// maxMetaSize bounds how much of a .meta file is read. A section entry
// takes at least ~30 bytes, so this allows millions of sections.
const maxMetaSize = 256 << 20

// errEmptyMeta is why a .meta file of nothing but white space is refused.
var errEmptyMeta = errors.New("empty file")

// ParseMeta parses the contents of a NAME.meta file: a JSON object whose
// "sections" member lists the sections of the object with their "name",
// load address "start" and "size" (keys in any letter case). The sections
// are returned in file order, unloaded ones (start 0) included. Every
// entry must have all three members; numbers must be non-negative
// integers and a section must not wrap around the address space.
//
// The document is decoded as it is read, entry by entry: memory follows
// the sections kept, not the size of the file. When r is also an
// io.ReaderAt (a file), errors give the line and column.
func ParseMeta(r io.Reader) ([]Section, error) {
	var secs []Section
	err := scanMeta(r, func() { secs = []Section{} }, func(s Section) error {
		secs = append(secs, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return secs, nil
}

// scanMeta decodes the NAME.meta document in r as ParseMeta does, without
// holding its sections: it calls list at the start of each "sections"
// list (a later one replaces an earlier one) and each with every entry in
// file order, and stops at the first error each returns.
func scanMeta(r io.Reader, list func(), each func(Section) error) error {
	lr := &io.LimitedReader{R: r, N: maxMetaSize + 1}
	sq := &squeezer{r: lr}
	dec := json.NewDecoder(sq)
	err := decodeMeta(dec, list, each)
	if lr.N <= 0 {
		return fmt.Errorf("larger than %d MiB", maxMetaSize>>20)
	}
	if je, ok := err.(*metaJSONError); ok {
		off := je.off
		if off >= 0 {
			off = sq.inputOffset(off)
		}
		return fmt.Errorf("malformed JSON: %w", jsonErrorAt(je.err, off, r))
	}
	return err
}

// maxSpaceRun bounds the white space between two JSON tokens that the
// decoder sees: encoding/json's Decoder keeps a run of white space in its
// buffer until the next token, so megabytes of it would cost as much
// memory. squeezer drops the rest of a longer run.
const maxSpaceRun = 4096

// A squeezer passes a JSON document through, dropping white space beyond
// maxSpaceRun bytes in a row outside strings, and remembers where, to map
// the decoder's offsets back to the document's.
type squeezer struct {
	r        io.Reader
	inString bool
	escaped  bool
	run      int   // white space bytes in a row passed so far
	out      int64 // bytes passed
	dropped  []squeezed
	total    int64 // bytes dropped
}

// squeezed says that by output offset out, total bytes had been dropped.
type squeezed struct{ out, total int64 }

func (s *squeezer) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		w := 0
		for _, c := range p[:n] {
			switch {
			case s.inString:
				s.run = 0
				switch {
				case s.escaped:
					s.escaped = false
				case c == '\\':
					s.escaped = true
				case c == '"':
					s.inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				s.run++
				if s.run > maxSpaceRun {
					s.total++
					if k := len(s.dropped); k > 0 && s.dropped[k-1].out == s.out+int64(w) {
						s.dropped[k-1].total = s.total
					} else {
						s.dropped = append(s.dropped, squeezed{s.out + int64(w), s.total})
					}
					continue
				}
			default:
				s.run = 0
				s.inString = c == '"'
			}
			p[w] = c
			w++
		}
		s.out += int64(w)
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

// inputOffset maps an offset of the squeezed stream to the document's.
func (s *squeezer) inputOffset(out int64) int64 {
	i, _ := slices.BinarySearchFunc(s.dropped, out+1, func(d squeezed, o int64) int { return cmp.Compare(d.out, o) })
	if i == 0 {
		return out
	}
	return out + s.dropped[i-1].total
}

// metaJSONError is a JSON error at byte off of the document.
type metaJSONError struct {
	err error
	off int64
}

func (e *metaJSONError) Error() string { return e.err.Error() }

// decodeMeta decodes the document from dec: the top-level object, its
// "sections" list one entry at a time (see scanMeta), and any other
// member skipped.
func decodeMeta(dec *json.Decoder, list func(), each func(Section) error) error {
	// Token's syntax errors are at the decoder's position in the stream;
	// Decode's are counted within the value it reads, so an entry's error
	// is placed at the entry's start instead.
	fail := func(off int64, err error) error {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return &metaJSONError{err, off}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return &metaJSONError{io.ErrUnexpectedEOF, -1}
		}
		return &metaJSONError{err, off}
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return errEmptyMeta
	}
	if err != nil {
		return fail(dec.InputOffset(), err)
	}
	if tok != json.Delim('{') {
		return &metaJSONError{fmt.Errorf("the document is %v, not an object", tokenKind(tok)), 0}
	}
	found := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail(dec.InputOffset(), err)
		}
		if k, _ := key.(string); !strings.EqualFold(k, "sections") {
			if err := skipValue(dec); err != nil {
				return fail(dec.InputOffset(), err)
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return fail(dec.InputOffset(), err)
		}
		if tok == nil { // "sections": null, as if absent
			found = false
			list()
			continue
		}
		if tok != json.Delim('[') {
			return &metaJSONError{fmt.Errorf(`"sections" is %v, not a list`, tokenKind(tok)), dec.InputOffset()}
		}
		// A later "sections" member replaces an earlier one, as for
		// encoding/json.
		found = true
		list()
		for i := 0; dec.More(); i++ {
			start := dec.InputOffset()
			var ms metaSection
			if err := dec.Decode(&ms); err != nil {
				return fail(start, fmt.Errorf("section %d: %w", i, err))
			}
			s, err := ms.section(i)
			if err != nil {
				return err
			}
			if err := each(s); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return fail(dec.InputOffset(), err)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return fail(dec.InputOffset(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &metaJSONError{errors.New("trailing data after the top-level object"), -1}
	}
	if !found {
		return errors.New(`no "sections" list`)
	}
	return nil
}

// section checks entry i and returns it as a Section.
func (ms *metaSection) section(i int) (Section, error) {
	var missing []string
	if ms.Name == nil {
		missing = append(missing, `"name"`)
	}
	if ms.Start == nil {
		missing = append(missing, `"start"`)
	}
	if ms.Size == nil {
		missing = append(missing, `"size"`)
	}
	if len(missing) > 0 {
		return Section{}, fmt.Errorf("section %d: missing %v", i, missing)
	}
	s := Section{Name: string(*ms.Name), Start: *ms.Start, Size: *ms.Size}
	if s.Size > math.MaxUint64-s.Start {
		return Section{}, fmt.Errorf("section %d (%s): start %#x + size %#x wraps around the address space", i, safename.String(s.Name), s.Start, s.Size)
	}
	return s, nil
}

// skipValue reads past the next JSON value, however deep, keeping none of
// it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// tokenKind names the kind of JSON value a token starts.
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "a list"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// jsonErrorAt adds where err happened: the line and column (1-based) of
// byte off, counted by reading r again from the start when r is an
// io.ReaderAt, else the byte offset. An unknown offset (-1) adds nothing.
func jsonErrorAt(err error, off int64, r io.Reader) error {
	if off < 0 {
		return err
	}
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return fmt.Errorf("at byte %d: %w", off, err)
	}
	line, col := int64(1), int64(1)
	buf := make([]byte, 32<<10)
	for pos := int64(0); pos < off; {
		n, rerr := ra.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		for _, c := range buf[:n] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		pos += int64(n)
		if rerr != nil || n == 0 {
			break
		}
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}
