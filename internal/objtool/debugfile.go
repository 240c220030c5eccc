package objtool

import (
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// DefaultDebugDir is where separate debug files are looked for by
// default, as llvm-symbolizer, GDB and Debian's -dbg packages have it.
const DefaultDebugDir = "/usr/lib/debug"

// findDebugFile returns the separate debug file of the binary f at path,
// opened, or nil if none is found. Like llvm-symbolizer, it looks by
// build ID first (DIR/.build-id/xx/rest.debug), then by .gnu_debuglink
// (next to the binary, in its .debug subdirectory, then under DIR with
// the binary's directory appended), where DIR is each of dirs; a
// debuglink candidate counts only if its CRC-32 matches. A candidate that
// is not a readable ELF file with DWARF is skipped.
func findDebugFile(path string, f *elfrel.File, buildID []byte, dirs []string) *elfrel.File {
	try := func(name string, crc *uint32) *elfrel.File {
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
		d, err := elfrel.Open(name)
		if err != nil {
			return nil
		}
		if d.Section(".debug_info") < 0 && d.Section(".zdebug_info") < 0 {
			d.Close()
			return nil
		}
		if crc != nil {
			fd, err := os.Open(name)
			if err != nil {
				d.Close()
				return nil
			}
			got, err := elfrel.FileCRC(fd)
			fd.Close()
			if err != nil || got != *crc {
				d.Close()
				return nil
			}
		}
		return d
	}
	if len(buildID) >= 2 {
		h := hex.EncodeToString(buildID)
		for _, dir := range dirs {
			if d := try(filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug"), nil); d != nil {
				return d
			}
		}
	}
	name, crc, ok := f.DebugLink()
	if !ok || filepath.Base(name) != name {
		return nil
	}
	binDir := filepath.Dir(path)
	if abs, err := filepath.Abs(binDir); err == nil {
		binDir = abs
	}
	candidates := []string{filepath.Join(binDir, name), filepath.Join(binDir, ".debug", name)}
	for _, dir := range dirs {
		candidates = append(candidates, filepath.Join(dir, binDir, name))
	}
	for _, c := range candidates {
		if c == path {
			continue
		}
		if d := try(c, &crc); d != nil {
			return d
		}
	}
	return nil
}
