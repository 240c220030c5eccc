package objtool

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// supKey identifies a supplementary file read for a link: the file, and
// the ID the link asks of it.
type supKey struct {
	file regfile.ID
	id   string
}

// supEntry is a supplementary file, read once, or why it cannot be used.
type supEntry struct {
	sup *jitsym.Sup
	err error
}

// supFor returns how the index of the binary at path, whose debug
// information is in the file debugPath (path itself, or its separate
// debug file), finds its supplementary file (see [jitsym.Sup]) where gdb
// and elfutils look for dwz's files: at the name the link gives if it is
// absolute, else relative to the directory of the file that holds the
// link, as it was opened and with its symbolic links resolved (a debug
// file found by build ID is a link into another directory); then by the
// file's ID under each debug directory, DIR/.build-id/xx/rest.debug. The
// first file with the link's ID is used. Each file is read once per
// Tool, however many binaries name it.
func (t *Tool) supFor(path, debugPath string) func(elfrel.SupLink) (*jitsym.Sup, error) {
	return func(link elfrel.SupLink) (*jitsym.Sup, error) {
		var first error
		for _, c := range supCandidates(debugPath, link, t.opts.DebugDirs) {
			e := t.openSup(c, link)
			if e == nil {
				continue
			}
			if e.err == nil {
				return e.sup, nil
			}
			if first == nil {
				first = e.err
			}
		}
		if first != nil {
			return nil, fmt.Errorf("%s: supplementary file %s: %w; the functions it names go unnamed, as with llvm-symbolizer",
				safename.String(path), safename.String(link.Name), first)
		}
		return nil, fmt.Errorf("%s: supplementary file %s (ID %x) not found: the functions it names go unnamed, as with llvm-symbolizer",
			safename.String(path), safename.String(link.Name), link.ID)
	}
}

// supCandidates returns where the supplementary file that link names may
// be, for the debug information in the file debugPath, in the order
// supFor says.
func supCandidates(debugPath string, link elfrel.SupLink, dirs []string) []string {
	var cs []string
	add := func(p string) {
		for _, c := range cs {
			if c == p {
				return
			}
		}
		cs = append(cs, p)
	}
	switch {
	case link.Name == "":
	case filepath.IsAbs(link.Name):
		add(filepath.Clean(link.Name))
	default:
		if abs, err := filepath.Abs(debugPath); err == nil {
			add(filepath.Join(filepath.Dir(abs), link.Name))
		}
		if real, err := filepath.EvalSymlinks(debugPath); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				add(filepath.Join(filepath.Dir(abs), link.Name))
			}
		}
	}
	if len(link.ID) >= 2 {
		h := hex.EncodeToString(link.ID)
		for _, dir := range dirs {
			add(filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug"))
		}
	}
	return cs
}

// openSup reads the supplementary file at path for link, once per file
// and ID; nil if there is no regular file there.
func (t *Tool) openSup(path string, link elfrel.SupLink) *supEntry {
	fd, err := regfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &supEntry{err: err}
	}
	id, err := regfile.IDOf(fd)
	if err != nil {
		fd.Close()
		return &supEntry{err: err}
	}
	e, computed := t.sups.Get(supKey{id, string(link.ID)}, func() *supEntry {
		f, err := elfrel.OpenFile(fd)
		if err != nil {
			return &supEntry{err: err}
		}
		f.SetInflateBudget(t.inflate)
		defer f.Close()
		s, err := jitsym.NewSup(f, link)
		return &supEntry{sup: s, err: err}
	})
	if !computed {
		fd.Close()
	}
	return e
}
