package record

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/procfs"
)

// readBuildIDs returns the build IDs of files (ELF files with a GNU
// build-ID note; the kernel's, named as perf names it, from
// /sys/kernel/notes; the vDSO's, from this process's), in the order of
// files, leaving out the files that have none or cannot be read
// (anonymous memory, files gone).
func readBuildIDs(files map[string]bool) []buildID {
	var out []buildID
	for _, file := range slices.Sorted(maps.Keys(files)) {
		kernel := files[file]
		var id []byte
		switch {
		case file == "[kernel.kallsyms]":
			if b, err := os.ReadFile("/sys/kernel/notes"); err == nil {
				id = gnuBuildID(b, binary.NativeEndian)
			}
		case file == "[vdso]":
			// The kernel's, as this process has it: perf record
			// writes the vDSO's build ID so (and a copy of it in
			// its cache); the reader uses its own if it is this one.
			if b, err := procfs.New("/proc").VDSO(); err == nil {
				if f, err := elf.NewFile(bytes.NewReader(b)); err == nil {
					id = elfBuildID(f)
				}
			}
		case strings.HasPrefix(file, "/"):
			id = fileBuildID(file)
		}
		if len(id) > 0 && len(id) <= 20 {
			out = append(out, buildID{file: file, id: id, kernel: kernel})
		}
	}
	return out
}

// fileBuildID returns the GNU build ID of the ELF file at path, or nil.
func fileBuildID(path string) []byte {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	return elfBuildID(f)
}

// elfBuildID returns the GNU build ID of the ELF file f, or nil.
func elfBuildID(f *elf.File) []byte {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			continue
		}
		if id := gnuBuildID(b, f.ByteOrder); id != nil {
			return id
		}
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<20 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		if id := gnuBuildID(b, f.ByteOrder); id != nil {
			return id
		}
	}
	return nil
}

// gnuBuildID returns the descriptor of the NT_GNU_BUILD_ID note in the
// notes b (each: name size, descriptor size, type, then the name and
// the descriptor, each padded to 4 bytes), or nil.
func gnuBuildID(b []byte, bo binary.ByteOrder) []byte {
	const ntGNUBuildID = 3
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := (uint64(namesz) + 3) &^ 3
		descEnd := nameEnd + (uint64(descsz)+3)&^3
		if descEnd > uint64(len(b)) {
			return nil
		}
		if typ == ntGNUBuildID && namesz == 4 && string(b[:4]) == "GNU\x00" {
			return slices.Clone(b[nameEnd : nameEnd+uint64(descsz)])
		}
		b = b[descEnd:]
	}
	return nil
}
