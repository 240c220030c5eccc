package driver

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	gdriver "github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/perfdata"
)

// substitutes maps the file names of a perf.data recording's mappings to
// the copies perf record kept in its build-ID cache, for the files that
// are no longer the build the recording saw: rebuilt since, or gone.
// perf report reads those copies; so do pprof's symbols, lines and
// disassembly, through substObj, while reports keep the recorded names.
type substitutes struct {
	mu    sync.Mutex
	paths map[string]string // by recorded name; "" where two builds conflict
}

// of returns the file to read for name: its substitute, or name.
func (s *substitutes) of(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.paths[name]; p != "" {
		return p
	}
	return name
}

// set records path as name's substitute, unless another path already is
// (two recordings of different builds under one name: neither is used).
func (s *substitutes) set(name, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths == nil {
		s.paths = map[string]string{}
	}
	if old, ok := s.paths[name]; ok && old != path {
		path = ""
	}
	s.paths[name] = path
}

// fileBuildID returns the GNU build ID of the ELF file at path, nil if it
// cannot be read or has none.
func fileBuildID(path string) []byte {
	f, err := elfrel.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	id, _ := f.BuildID()
	return id
}

// useBuildIDCache finds, for each file of p (a perf.data recording, read
// from src) that is not the build recorded, perf's copy of the recorded
// build in the build-ID cache dir, and makes it the file read for that
// name. A name with mappings of two builds is left alone.
func (r *run) useBuildIDCache(p *profile.Profile, src, dir string) {
	if dir == "" {
		return
	}
	builds := map[string]map[string]bool{}
	for _, m := range p.Mapping {
		if filepath.IsAbs(m.File) && len(m.BuildID) > 2 {
			if builds[m.File] == nil {
				builds[m.File] = map[string]bool{}
			}
			builds[m.File][m.BuildID] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(builds)) { // messages in a stable order
		ids := builds[name]
		if len(ids) != 1 {
			continue
		}
		var id string
		for id = range ids {
		}
		want, err := hex.DecodeString(id)
		if err != nil {
			continue
		}
		onDisk := fileBuildID(name)
		if bytes.Equal(onDisk, want) {
			continue
		}
		copy := perfdata.CachePath(dir, id, "elf")
		if !bytes.Equal(fileBuildID(copy), want) {
			continue
		}
		why := "is another build than the one recorded"
		if _, err := os.Stat(name); err != nil {
			why = "is not there any more"
		}
		r.subst.set(name, copy)
		r.jit.warnOnce(fmt.Sprintf("%s: %s %s: reading perf's copy of it, %s", src, name, why, copy))
	}
}

// substObj is the object tool upstream's driver gets: obj, reading each
// file's substitute (see substitutes) in its place, and naming the code
// of the files perf inject makes as the JIT stage names it (see
// injectedObjFile).
type substObj struct {
	obj   ObjTool
	subst *substitutes
}

func (s substObj) Open(file string, start, limit, offset uint64, relocationSymbol string) (gdriver.ObjFile, error) {
	f, err := s.obj.Open(s.subst.of(file), start, limit, offset, relocationSymbol)
	if err == nil && isPerfInjected(file) {
		f = injectedObjFile{f, file}
	}
	return f, err
}

func (s substObj) Disasm(file string, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	insts, err := s.obj.Disasm(s.subst.of(file), start, end, intelSyntax)
	if isPerfInjected(file) {
		injectedInsts(insts)
	}
	return insts, err
}
