package main

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
	"github.com/klauspost/compress/zstd"
)

// neutralPrefixes are where checked-in fixtures may name the files they
// were made of (testdata/README.md): no machine has them as the place
// it made anything.
var neutralPrefixes = []string{
	"/mnt/jitpprof-fixtures/", // testdata/golden.sh's generators' outputs
	"/proc/self/cwd/",         // debug info of the programs built from the checkout (Bazel's convention, which pprof trims)
	"/jitpprof/",              // debug info of internal/objtool/testdata/foreign (its gen.sh's -fdebug-prefix-map)
}

// systemPrefixes are paths of the system, the same on every machine:
// Debian's programs and libraries, devices, /proc, and the perf maps
// runtimes write (/tmp/perf-PID.map).
var systemPrefixes = []string{"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/", "/etc/", "/dev/", "/proc/", "/sys/", "/tmp/perf-"}

// madeUp are files whose paths are made up by the test that wrote them,
// not names of files anywhere.
var madeUp = map[string]bool{
	"internal/folded/testdata/heap4.folded": true, // folded stacks of the profile folded_test.go builds
}

// TestFixturesNameNoMachinePath reads every file under the repository's
// testdata directories, and what it holds compressed (gzip, an ELF
// file's compressed sections, the records of perf record -z), and fails
// for each absolute path in them outside the neutral and system
// prefixes: such a path names the directory a fixture was made in, on
// the machine that made it (say /home/alice/jitpprof/testdata/...).
// testdata/golden.sh makes the fixtures under a neutral prefix.
func TestFixturesNameNoMachinePath(t *testing.T) {
	root := testenv.RepoRoot(t)
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "build" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.Type().IsRegular() && slices.Contains(strings.Split(filepath.Dir(rel), string(filepath.Separator)), "testdata") && !madeUp[filepath.ToSlash(rel)] {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("%d files under testdata directories: is %s the repository?", len(files), root)
	}
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		parts, err := fixtureParts(b)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		seen := map[string]bool{}
		for _, part := range parts {
			for _, p := range machinePaths(part) {
				if !seen[p] {
					seen[p] = true
					t.Errorf("%s names %s, a path of the machine it was made on (testdata/golden.sh makes fixtures under %s)", rel, p, neutralPrefixes[0])
				}
			}
		}
	}
}

// TestMachinePaths checks machinePaths on the forms paths take in
// fixtures, scripts and documents.
func TestMachinePaths(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{text: "500000000000-500000001000 r-xp 00000000 00:00 5310601     /home/u/src/testdata/mcjit/golden/bin/libleaf.so\n", want: []string{"/home/u/src/testdata/mcjit/golden/bin/libleaf.so"}},
		{text: "JS:*fib /tmp/nodefix/prof/work.js:5:13", want: []string{"/tmp/nodefix/prof/work.js:5:13"}},
		{text: "\x00/work/main/testdata/perf/golden/work\x00", want: []string{"/work/main/testdata/perf/golden/work"}},
		{text: `{"file":"/root/x.c"}`, want: []string{"/root/x.c"}},
		{text: "7f00-7f10 r-xp 0 00:00 0 /mnt/jitpprof-fixtures/mcjit/bin/jit_host /usr/lib/x86_64-linux-gnu/libc.so.6"},
		{text: "/proc/self/cwd/testdata/mcjit/workload.c /tmp/perf-7000.map /dev/zero (deleted)"},
		{text: `mv "$dir"/basic/perf-*.map "${out}/x/y" $(dirname "$0")/a/b`},
		{text: "relative/path/x https://github.com/google/pprof ../../testdata/x ~/go/pkg"},
		{text: "/mnt/other/x /mnt/jitpprof-fixtures-not/x", want: []string{"/mnt/other/x", "/mnt/jitpprof-fixtures-not/x"}},
		{text: "a single component /work is no path"},
		{text: "\x07/F/V\x00 /ab/c\n \x00/Ab3x/9zQ\x81"}, // noise: short, or not a string's end
		{text: "JS:*fib /tmp/nodefix/prof/work.js:5:13\x00", want: []string{"/tmp/nodefix/prof/work.js:5:13"}},
	} {
		if got := machinePaths([]byte(tc.text)); !slices.Equal(got, tc.want) {
			t.Errorf("machinePaths(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// absPath matches an absolute path of two components or more.
var absPath = regexp.MustCompile(`/[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+@:-]+)+`)

// machinePaths returns the absolute paths in b outside the neutral and
// system prefixes. A path is absolute where it starts a word: not after
// a character of a name, nor after a shell expansion ("$out"/x,
// ${out}/x, $(dirname x)/y) or a URL's slash. It ends a word too (the
// end of a C string, a line, a quotation), and has 8 bytes at least: in
// the bytes of compressed data or machine code, "/F/V" is noise.
func machinePaths(b []byte) []string {
	var out []string
	for _, loc := range absPath.FindAllIndex(b, -1) {
		if !startsWord(b, loc[0]) || loc[1]-loc[0] < 8 || loc[1] < len(b) && strings.IndexByte("\x00\n\r\t \"'`)]>,;|", b[loc[1]]) < 0 {
			continue
		}
		p := strings.TrimRight(string(b[loc[0]:loc[1]]), ".:") // a sentence's end
		if !slices.ContainsFunc(slices.Concat(neutralPrefixes, systemPrefixes), func(prefix string) bool {
			return strings.HasPrefix(p+"/", prefix)
		}) {
			out = append(out, p)
		}
	}
	return out
}

// startsWord says whether the path at b[i:] starts a word.
func startsWord(b []byte, i int) bool {
	if i == 0 {
		return true
	}
	if c := b[i-1]; isNameByte(c) || strings.IndexByte("/.~$*\\", c) >= 0 {
		return false
	}
	// After closing quotes or brackets: a shell word's continuation if
	// they close one ("$out"/x), a path if they stand alone.
	j := i
	for j > 0 && strings.IndexByte(`"')}]`, b[j-1]) >= 0 {
		j--
	}
	return j == i || j == 0 || !isNameByte(b[j-1]) && b[j-1] != '?'
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+'
}

// fixtureParts returns the bytes of a fixture in which a path may be
// written: the file itself and, decompressed, a gzip file's content
// (pprof's profiles), an ELF file's compressed sections
// (SHF_COMPRESSED, debug info), and the records a perf.data file holds
// compressed (perf record -z).
func fixtureParts(b []byte) ([][]byte, error) {
	parts := [][]byte{b}
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return parts, nil // not gzip after all
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return parts, err
		}
		parts = append(parts, data)
	case bytes.HasPrefix(b, []byte(elf.ELFMAG)):
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			return parts, nil // hostile test input
		}
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_COMPRESSED == 0 {
				continue
			}
			data, err := s.Data()
			if err != nil {
				return parts, err
			}
			parts = append(parts, data)
		}
	case bytes.HasPrefix(b, []byte("PERFILE2")):
		data, err := perfCompressed(b)
		if err != nil {
			return parts, err
		}
		parts = append(parts, data)
	}
	return parts, nil
}

// perfCompressed returns the records a little-endian perf.data file b
// holds compressed, decompressed: perf record -z writes them as one
// Zstandard stream cut into PERF_RECORD_COMPRESSED records (type 81;
// 83, PERF_RECORD_COMPRESSED2, has the size of its data first), in the
// data section (the header's offset and size at bytes 40 and 48).
func perfCompressed(b []byte) ([]byte, error) {
	le := binary.LittleEndian
	if len(b) < 56 {
		return nil, nil
	}
	off, size := le.Uint64(b[40:]), le.Uint64(b[48:])
	if off > uint64(len(b)) || size > uint64(len(b))-off {
		return nil, nil // a killed recording's size is 0; none here
	}
	data := b[off : off+size]
	var stream []byte
	for len(data) >= 8 {
		typ, n := le.Uint32(data), int(le.Uint16(data[6:]))
		if n < 8 || n > len(data) {
			break
		}
		switch rec := data[8:n]; {
		case typ == 81:
			stream = append(stream, rec...)
		case typ == 83 && len(rec) >= 8:
			stream = append(stream, rec[8:8+min(le.Uint64(rec), uint64(len(rec)-8))]...)
		}
		data = data[n:]
	}
	if len(stream) == 0 {
		return nil, nil
	}
	d, err := zstd.NewReader(bytes.NewReader(stream))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	// perf ends the stream at the last record, not with a frame's end.
	out, err := io.ReadAll(d)
	if err == io.ErrUnexpectedEOF {
		err = nil
	}
	return out, err
}
