package perfdata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// A fileFinder finds the files a recording mapped, to unwind through them
// and to name the vDSO's functions: each where the recording saw it, if
// its build ID is the recorded one (or the recording has none), else
// perf's copy in its build-ID cache (perf record keeps one of each file
// sampled, the vDSO included).
type fileFinder struct {
	buildIDDir string            // "" for none
	buildIDs   map[string][]byte // the recording's, by file name
}

// key tells mm's file apart from others of the same name.
func (ff *fileFinder) key(mm *mmapping) string {
	return mm.file + "\x00" + string(ff.buildID(mm))
}

func (ff *fileFinder) buildID(mm *mmapping) []byte {
	if mm.buildID != nil {
		return mm.buildID
	}
	return ff.buildIDs[mm.file]
}

// errOtherBuild: a file is not the one recorded.
var errOtherBuild = errors.New("its build ID is not the recording's")

// open opens mm's file; the caller closes it. The error says why no
// candidate is usable.
func (ff *fileFinder) open(mm *mmapping) (*elfrel.File, error) {
	id := ff.buildID(mm)
	var candidates []string
	if filepath.IsAbs(mm.file) {
		candidates = append(candidates, mm.file)
	}
	if len(id) > 1 && ff.buildIDDir != "" {
		// perf's cache: .build-id/xx/rest links to a directory holding
		// the file as "elf", or as "vdso" for the vDSO.
		hex := fmt.Sprintf("%x", id)
		dir := filepath.Join(ff.buildIDDir, ".build-id", hex[:2], hex[2:])
		candidates = append(candidates, filepath.Join(dir, "elf"), filepath.Join(dir, "vdso"))
	}
	var why error
	for _, c := range candidates {
		ef, err := elfrel.Open(c)
		if err == nil {
			got, _ := ef.BuildID()
			if id == nil || got == nil || bytes.Equal(id, got) {
				return ef, nil
			}
			ef.Close()
			err = fmt.Errorf("%s: %w", c, errOtherBuild)
		}
		if why == nil || !errors.Is(err, os.ErrNotExist) {
			why = err
		}
	}
	if why == nil {
		why = errors.New("not found")
	}
	return nil, why
}
