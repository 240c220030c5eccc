package objtool

import (
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/regfile"
)

// DefaultDebugDir is where separate debug files are looked for by
// default, as llvm-symbolizer, GDB and Debian's -dbg packages have it.
const DefaultDebugDir = "/usr/lib/debug"

// findDebugFile returns the separate debug file of the binary f at path,
// opened, or nil if none is found: the first of debugCandidates that is a
// readable ELF file with DWARF (and, for a debuglink candidate, whose
// CRC-32 matches).
func findDebugFile(path string, f *elfrel.File, buildID []byte, dirs []string) *elfrel.File {
	name, crc, ok := f.DebugLink()
	for _, c := range debugCandidates(path, buildID, debugLink{name, crc, ok}, dirs) {
		if !c.matches() {
			continue
		}
		d, err := elfrel.Open(c.path)
		if err != nil {
			continue
		}
		if d.Section(".debug_info") < 0 && d.Section(".zdebug_info") < 0 {
			d.Close()
			continue
		}
		return d
	}
	return nil
}

// debugLink is what a binary's .gnu_debuglink section says: the name of
// its debug file and that file's CRC-32; ok is false without one.
type debugLink struct {
	name string
	crc  uint32
	ok   bool
}

// A debugCandidate is a file that may be a binary's debug file.
type debugCandidate struct {
	path string
	crc  *uint32 // for a debuglink candidate, the CRC-32 it must have
}

// matches reports whether c is a regular file with the CRC-32 it must
// have, if any.
func (c debugCandidate) matches() bool {
	st, err := os.Stat(c.path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if c.crc == nil {
		return true
	}
	fd, err := regfile.Open(c.path) // a FIFO swapped in since the Stat would block os.Open
	if err != nil {
		return false
	}
	defer fd.Close()
	got, err := elfrel.FileCRC(fd)
	return err == nil && got == *c.crc
}

// debugCandidates returns where the separate debug file of the binary at
// path may be, in the order llvm-symbolizer looks: by build ID first
// (DIR/.build-id/xx/rest.debug), then by .gnu_debuglink (next to the
// binary, in its .debug subdirectory, then under DIR with the binary's
// directory appended), where DIR is each of dirs.
func debugCandidates(path string, buildID []byte, link debugLink, dirs []string) []debugCandidate {
	var cs []debugCandidate
	if len(buildID) >= 2 {
		h := hex.EncodeToString(buildID)
		for _, dir := range dirs {
			cs = append(cs, debugCandidate{path: filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug")})
		}
	}
	if !link.ok || filepath.Base(link.name) != link.name {
		return cs
	}
	binDir := filepath.Dir(path)
	if abs, err := filepath.Abs(binDir); err == nil {
		binDir = abs
	}
	names := []string{filepath.Join(binDir, link.name), filepath.Join(binDir, ".debug", link.name)}
	for _, dir := range dirs {
		names = append(names, filepath.Join(dir, binDir, link.name))
	}
	for _, n := range names {
		if n != path {
			cs = append(cs, debugCandidate{path: n, crc: &link.crc})
		}
	}
	return cs
}
