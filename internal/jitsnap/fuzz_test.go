package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/profile"
)

var update = flag.Bool("update", false, "rewrite the seed corpus in testdata/fuzz")

// flatBase is where a fuzz input is mapped: the whole input is one
// readable region whose first 24 bytes are the descriptor.
const flatBase = 0x10000

// flatImage lays out a descriptor, its entries and symfiles in one
// buffer to be mapped at flatBase: the shape of a FuzzCollect input.
func flatImage(symfiles ...[]byte) []byte {
	le := binary.LittleEndian
	n := len(symfiles)
	buf := make([]byte, entrySize+n*entrySize) // descriptor padded to an entry
	le.PutUint32(buf, 1)
	entry := func(i int) uint64 { return flatBase + entrySize + uint64(i)*entrySize }
	if n > 0 {
		le.PutUint64(buf[16:], entry(0))
	}
	for i, s := range symfiles {
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		e := buf[entry(i)-flatBase:]
		if i+1 < n {
			le.PutUint64(e[0:], entry(i+1))
		}
		if i > 0 {
			le.PutUint64(e[8:], entry(i-1))
		}
		le.PutUint64(e[16:], flatBase+uint64(len(buf)))
		le.PutUint64(e[24:], uint64(len(s)))
		buf = append(buf, s...)
	}
	return buf
}

// fuzzSeeds are the seed corpus: checked in under testdata/fuzz/NAME and
// also added in code, so a missing file is caught by TestSeedCorpus.
func fuzzSeeds() map[string]map[string][]byte {
	obj := testObject(0x7f0000001000)
	obj2 := buildELF(elf.ET_REL, "b.c", textAt(".text.f", 0x7f0000009000), textAt(".text.g", 0x7f000000a000))
	cycle := flatImage(obj, obj2)
	binary.LittleEndian.PutUint64(cycle[entrySize+entrySize:], flatBase+entrySize) // entry 1 -> entry 0
	badVersion := flatImage(obj)
	badVersion[0] = 2
	return map[string]map[string][]byte{
		"FuzzCollect": {
			"empty":       flatImage(),
			"two-objects": flatImage(obj, obj2),
			"cycle":       cycle,
			"version-2":   badVersion,
			"truncated":   flatImage(obj[:len(obj)/2], obj2),
			"et-exec":     flatImage(buildELF(elf.ET_EXEC, "x.c", textAt(".text", 0x401000))),
		},
		"FuzzCheckObject": {
			"object":    obj,
			"two-texts": obj2,
			"truncated": obj[:len(obj)-7],
			"et-dyn":    buildELF(elf.ET_DYN, "", textAt(".text", 0x1000)),
		},
	}
}

// corpusFile is the encoding of a one-[]byte fuzz input.
func corpusFile(b []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b)
}

// TestSeedCorpus checks that testdata/fuzz holds the seeds fuzzSeeds
// generates; with -update it writes them.
func TestSeedCorpus(t *testing.T) {
	for target, seeds := range fuzzSeeds() {
		for name, b := range seeds {
			path := filepath.Join("testdata", "fuzz", target, name)
			want := corpusFile(b)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is missing or stale (%v); run go test -run TestSeedCorpus -update", path, err)
			}
		}
	}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+-[0-9a-f]{16}$`)

// FuzzCollect walks a list in an arbitrary memory image: it must end
// without a panic, within its bounds, and keep only objects that are
// exactly the bytes in the image, parse, and produce a meta file the
// mapping stage accepts.
func FuzzCollect(f *testing.F) {
	for _, b := range fuzzSeeds()["FuzzCollect"] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < descriptorSize {
			return
		}
		im := &image{regions: []region{{flatBase, data}}}
		d := Descriptor{Addr: flatBase, Object: "fuzz", Order: binary.LittleEndian}
		opts := Options{MaxEntries: 64, MaxTotalSize: 1 << 20, Attempts: 2}
		objs, skipped, err := opts.Collect(im, im.mappings(), d)
		if err != nil {
			return
		}
		if len(objs)+len(skipped) > opts.MaxEntries {
			t.Fatalf("got %d objects and %d skipped from a list bounded to %d entries", len(objs), len(skipped), opts.MaxEntries)
		}
		for _, o := range objs {
			if o.Addr < flatBase || o.Addr-flatBase+o.Size > uint64(len(data)) ||
				!bytes.Equal(imageBytes(t, o), data[o.Addr-flatBase:o.Addr-flatBase+o.Size]) {
				t.Fatalf("object %s at %#x size %d is not the image's bytes", o.Name, o.Addr, o.Size)
			}
			if !namePattern.MatchString(o.Name) {
				t.Fatalf("object name %q is not IDENT-HASH", o.Name)
			}
			meta, err := profile.ParseMeta(bytes.NewReader(Meta(o.Sections)))
			if err != nil {
				t.Fatalf("object %s: profile.ParseMeta rejects its meta: %v", o.Name, err)
			}
			var loaded []profile.Section
			for _, s := range o.Sections {
				if s.Addr != 0 {
					loaded = append(loaded, profile.Section{Name: s.Name, Start: s.Addr, Size: s.Size})
				}
			}
			if !slices.Equal(meta, loaded) {
				t.Fatalf("object %s: meta round trip changed the sections", o.Name)
			}
		}
	})
}

// FuzzCheckObject checks that what jitsnap accepts, the mapping stage
// reads: the object written with its .meta loads through profile.Load
// with the executable sections jitsnap saw, and its ident is a safe file
// name stem.
func FuzzCheckObject(f *testing.F) {
	for _, b := range fuzzSeeds()["FuzzCheckObject"] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		secs, ident, err := checkObject(data, binary.LittleEndian)
		if err != nil {
			return
		}
		if !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(ident) || ident[0] == '.' {
			t.Fatalf("ident %q is not a safe file name stem", ident)
		}
		var code []profile.Section
		for _, s := range secs {
			if s.Executable() && s.Addr != 0 && s.Size != 0 {
				code = append(code, profile.Section{Name: s.Name, Start: s.Addr, Size: s.Size})
			}
		}
		dir := t.TempDir()
		if _, err := WriteObject(dir, Object{Name: ident + "-0000000000000000", Sections: secs, Data: data}); err != nil {
			t.Fatal(err)
		}
		set, errs := profile.Load([]string{dir})
		for _, err := range errs {
			var fe *elfrel.FormatError
			var ue *elfrel.UnsupportedError
			if errors.As(err, &fe) || errors.As(err, &ue) {
				t.Fatalf("jitsnap accepts the object, the mapping stage's reader does not: %v", err)
			}
		}
		if len(errs) > 0 {
			return // refused for what it claims (NOBITS code, kernel addresses), not for its format
		}
		if set.Len() != 1 || len(set.Objects[0].Sections) != len(code) {
			t.Fatalf("the mapping stage sees %d objects, want 1 with %d code sections", set.Len(), len(code))
		}
		for _, s := range code {
			if !slices.Contains(set.Objects[0].Sections, s) {
				t.Fatalf("the mapping stage lacks code section %+v", s)
			}
		}
	})
}
