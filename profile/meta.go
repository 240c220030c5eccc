package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jitpprof/pprof/internal/safename"
	"io"
	"math"
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

// metaFile is the JSON document of a NAME.meta file. encoding/json matches
// keys case-insensitively, so "sections", "Sections" and "SECTIONS" (and
// the same for the member keys) are all accepted.
type metaFile struct {
	Sections *[]metaSection
}

type metaSection struct {
	Name  *string
	Start *uint64
	Size  *uint64
}

// maxMetaSize bounds how much of a .meta file is read. A section entry
// takes at least ~30 bytes, so this allows millions of sections while
// keeping a hostile file from exhausting memory.
const maxMetaSize = 256 << 20

// ParseMeta parses the contents of a NAME.meta file: a JSON object whose
// "sections" member lists the sections of the object with their "name",
// load address "start" and "size" (keys in any letter case). The sections
// are returned in file order, unloaded ones (start 0) included. Every
// entry must have all three members; numbers must be non-negative
// integers and a section must not wrap around the address space.
func ParseMeta(r io.Reader) ([]Section, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxMetaSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMetaSize {
		return nil, fmt.Errorf("larger than %d MiB", maxMetaSize>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file")
	}
	var doc metaFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", jsonErrorAt(err, data))
	}
	if dec.More() {
		return nil, errors.New("malformed JSON: trailing data after the top-level object")
	}
	if doc.Sections == nil {
		return nil, errors.New(`no "sections" list`)
	}
	secs := make([]Section, 0, len(*doc.Sections))
	for i, ms := range *doc.Sections {
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
			return nil, fmt.Errorf("section %d: missing %v", i, missing)
		}
		s := Section{Name: *ms.Name, Start: *ms.Start, Size: *ms.Size}
		if s.Size > math.MaxUint64-s.Start {
			return nil, fmt.Errorf("section %d (%s): start %#x + size %#x wraps around the address space", i, safename.String(s.Name), s.Start, s.Size)
		}
		secs = append(secs, s)
	}
	return secs, nil
}

// jsonErrorAt adds the line and column (1-based) to a JSON syntax or
// type error.
func jsonErrorAt(err error, data []byte) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset - 1 // the offending byte: Offset bytes were read
	case errors.As(err, &typ):
		off = typ.Offset // the end of the offending value
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}
