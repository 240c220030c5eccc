package perfdata

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReadKallsyms: the table of this machine's /proc/kallsyms, and of a
// file with module symbols, symbols of other types, zero and bad
// addresses and symbols out of order, has the text symbols that the
// straightforward reading (a line's fields by strings.Fields, its
// address by strconv.ParseUint) gives, sorted by address.
func TestReadKallsyms(t *testing.T) {
	made := filepath.Join(t.TempDir(), "kallsyms")
	if err := os.WriteFile(made, []byte("ffffffff81000000 T _text\n"+
		"ffffffff81001000 t helper\n"+
		"ffffffff81000800 D data_sym\n"+
		"0000000000000000 T hidden\n"+
		"ffffffffc0002000 t mod_fn\t[some_mod]\n"+
		"ffffffffc0001000 T mod_init\t[some_mod]\n"+
		"fffffffff81000000 T too_long\n"+
		"xyz T not_hex\n"+
		"ffffffff81000400 T\n"+
		"ffffffff81000400 TT two_letters\n"+
		"  ffffffff81000200   T   spaced  \n"+
		"ffffffff81000100 T last_no_newline"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{made, "/proc/kallsyms"}
	if testing.Short() {
		paths = paths[:1] // reading /proc/kallsyms takes the kernel a while
	}
	for _, path := range paths {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		k, err := readKallsyms(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		type sym struct {
			addr uint64
			name string
		}
		var wantSyms []sym
		for line := range strings.Lines(string(want)) {
			f := strings.Fields(line)
			if len(f) < 3 || (f[1] != "t" && f[1] != "T") {
				continue
			}
			if a, err := strconv.ParseUint(f[0], 16, 64); err == nil && a != 0 {
				wantSyms = append(wantSyms, sym{a, f[2]})
			}
		}
		slices.SortStableFunc(wantSyms, func(a, b sym) int { return cmp.Compare(a.addr, b.addr) })
		var got []sym
		for i := range k.addrs {
			got = append(got, sym{k.addrs[i], string(k.name(i))})
		}
		if !slices.Equal(got, wantSyms) {
			t.Errorf("%s: %d symbols %.5v..., want %d %.5v...", path, len(got), got, len(wantSyms), wantSyms)
		}
		t.Logf("%s: %d text symbols", path, len(got))
	}
}

// BenchmarkReadKallsyms reads this machine's /proc/kallsyms, copied to a
// file first (the kernel takes longer to write it than we to read it).
func BenchmarkReadKallsyms(b *testing.B) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		b.Skip(err)
	}
	path := filepath.Join(b.TempDir(), "kallsyms")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if k, err := readKallsyms(path); err != nil || k.empty() {
			b.Fatal(k, err)
		}
	}
}

// TestParseHex: parseHex agrees with strconv.ParseUint(b, 16, 64) on
// numbers of every length around 16 digits, bad digits and overflow.
func TestParseHex(t *testing.T) {
	for _, s := range []string{"", "0", "f", "F", "ffffffff81000000", "FFFFFFFFFFFFFFFF", "10000000000000000",
		"0000000000000000f", "00000000000000000000ffffffffffffffff", "g", "ffffffff8100000x", " 1", "1 ", "-1", "+1",
		"0x10", "1_0", "fffffffffffffff", "\xff", "ffffffffffffffff0"} {
		want, err := strconv.ParseUint(s, 16, 64)
		got, ok := parseHex([]byte(s))
		if ok != (err == nil) || got != want && ok {
			t.Errorf("parseHex(%q) = %#x, %v; ParseUint: %#x, %v", s, got, ok, want, err)
		}
	}
}
