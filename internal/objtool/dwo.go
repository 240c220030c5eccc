package objtool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// dwoFor returns how the index of the binary at path finds the split
// DWARF of its skeleton units where llvm-symbolizer looks: in the DWARF
// package PATH.dwp if there is one, else in each unit's .dwo file, at
// DW_AT_dwo_name, relative to the skeleton's DW_AT_comp_dir unless it is
// absolute. A missing file is said once per binary, as are files that
// cannot be used: the units they complete get the skeleton's line table
// alone, as they do from llvm-symbolizer.
func (t *Tool) dwoFor(path string) *jitsym.DWO {
	var missing, bad sync.Once
	warn := func(once *sync.Once, msg string) {
		if t.opts.Warn != nil {
			once.Do(func() { t.opts.Warn(msg) })
		}
	}
	return &jitsym.DWO{
		Open: func(u jitsym.SplitUnit) (*os.File, error) {
			name := u.DWOName
			if !filepath.IsAbs(name) && u.CompDir != "" {
				name = filepath.Join(u.CompDir, name)
			}
			f, err := openIfExists(path, "split DWARF file", name)
			if f == nil && err == nil {
				warn(&missing, fmt.Sprintf("%s: split DWARF file %s not found: the code it describes is symbolized from the binary's skeleton units alone, "+
					"as llvm-symbolizer does (other files missing are not said)", safename.String(path), safename.String(name)))
			}
			return f, err
		},
		Package: func() (*elfrel.File, error) {
			fd, err := openIfExists(path, "DWARF package", path+".dwp")
			if fd == nil {
				return nil, err
			}
			f, err := elfrel.OpenFile(fd)
			if err != nil {
				return nil, fmt.Errorf("%s: DWARF package: %w", safename.String(path), err)
			}
			f.SetInflateBudget(t.inflate)
			return f, nil
		},
		Warn: func(msg string) {
			warn(&bad, msg+" (other such messages about this binary's split DWARF are not said)")
		},
	}
}

// openIfExists opens the regular file name, what of the binary at path:
// nil and no error if there is no such file, an error naming the binary,
// what and name if it cannot be opened.
func openIfExists(path, what, name string) (*os.File, error) {
	f, err := regfile.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", safename.String(path), what, safename.String(name), err)
	}
	return f, nil
}
