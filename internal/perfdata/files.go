package perfdata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/procfs"
)

// A fileFinder finds the files a recording mapped, to unwind through them
// and to name the vDSO's functions: each where the recording saw it, if
// its build ID is the recorded one (or the recording has none), else
// perf's copy in its build-ID cache (perf record keeps one of each file
// sampled, the vDSO included); the vDSO, first, this process's own if it
// is the one recorded (a recording made on this machine, pprof -record's
// above all, which keeps no cache).
type fileFinder struct {
	buildIDDir string            // "" for none
	buildIDs   map[string][]byte // the recording's, by file name
	proc       procfs.FS         // this process's vDSO, for the recording's
	vdso       []byte            // read from proc when first needed
	vdsoRead   bool
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

// CachePath returns where perf's build-ID cache dir keeps member ("elf"
// for a binary, "vdso" for the vDSO, "kallsyms" for a kernel's symbols)
// of the file whose build ID is hexID (at least 2 hex digits):
// .build-id/xx/rest links to the directory holding it.
func CachePath(dir, hexID, member string) string {
	return filepath.Join(dir, ".build-id", hexID[:2], hexID[2:], member)
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
		hex := fmt.Sprintf("%x", id)
		candidates = append(candidates, CachePath(ff.buildIDDir, hex, "elf"), CachePath(ff.buildIDDir, hex, "vdso"))
	}
	var why error
	if mm.file == "[vdso]" {
		if ef := ff.ownVDSO(mm, id); ef != nil {
			return ef, nil
		}
	}
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

// ownVDSO returns this process's vDSO (see procfs.FS.VDSO) for the
// recorded vDSO mapping mm, if it is the one recorded: of the build ID
// id, or, where the recording has none, of mm's size (a recording made
// by this kernel for a process of this architecture; one of a 32-bit
// process, or another kernel's, has another vDSO). Else nil.
func (ff *fileFinder) ownVDSO(mm *mmapping, id []byte) *elfrel.File {
	if !ff.vdsoRead {
		ff.vdso, _ = ff.proc.VDSO()
		ff.vdsoRead = true
	}
	if ff.vdso == nil {
		return nil
	}
	ef, err := elfrel.NewFile(bytes.NewReader(ff.vdso), int64(len(ff.vdso)), "[vdso]")
	if err != nil {
		return nil
	}
	got, _ := ef.BuildID()
	if id != nil && !bytes.Equal(id, got) || id == nil && mm.limit-mm.start != uint64(len(ff.vdso)) {
		ef.Close()
		return nil
	}
	return ef
}
