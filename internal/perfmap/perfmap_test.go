package perfmap

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestParse reads maps in the formats real runtimes write and checks
// every lookup: V8's bare hex with "JS:*" names, the JDK's 0x-prefixed
// zero-padded fields with names holding spaces, unsorted lines, a later
// line winning over an earlier one for the addresses they share.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  map[uint64]string // address -> name, "" for none
		stats Stats
	}{
		{
			name: "V8",
			input: "7f8c2e746440 3c8 JS:*work /app.js:3:14\n" +
				"369c4b34b926 2a JS:~fib /tmp/work.js:1:13\n",
			want: map[uint64]string{
				0x7f8c2e746440: "JS:*work /app.js:3:14", 0x7f8c2e746807: "JS:*work /app.js:3:14",
				0x7f8c2e746808: "", 0x7f8c2e74643f: "", 0x369c4b34b926: "JS:~fib /tmp/work.js:1:13",
			},
			stats: Stats{Entries: 2},
		},
		{
			name:  "JDK",
			input: "0x00007fefc8ec7a20 0x0000000000000298 int App.hot(int[])\r\n0x00007fefc8ec7000 0x10 void App.main(java.lang.String[])\n",
			want:  map[uint64]string{0x7fefc8ec7a20: "int App.hot(int[])", 0x7fefc8ec7cb7: "int App.hot(int[])", 0x7fefc8ec700f: "void App.main(java.lang.String[])"},
			stats: Stats{Entries: 2},
		},
		{
			name:  "later entry wins where they overlap",
			input: "1000 100 old\n1080 100 new\n",
			want:  map[uint64]string{0x1000: "old", 0x107f: "old", 0x1080: "new", 0x10ff: "new", 0x1100: "new", 0x117f: "new", 0x1180: ""},
			stats: Stats{Entries: 2, Overlaps: 1},
		},
		{
			name:  "earlier entry keeps what the later one does not cover",
			input: "1000 100 big\n1040 10 small\n",
			want:  map[uint64]string{0x1000: "big", 0x1040: "small", 0x104f: "small", 0x1050: "big", 0x10ff: "big"},
			stats: Stats{Entries: 2, Overlaps: 1},
		},
		{
			name:  "duplicate: the last one wins",
			input: "2000 20 first\n2000 20 second\n",
			want:  map[uint64]string{0x2000: "second", 0x201f: "second"},
			stats: Stats{Entries: 2, Overlaps: 1},
		},
		{
			name:  "unsorted",
			input: "3000 10 c\n1000 10 a\n2000 10 b\n",
			want:  map[uint64]string{0x1000: "a", 0x2005: "b", 0x300f: "c", 0x1010: ""},
			stats: Stats{Entries: 3},
		},
		{
			name:  "bad lines are counted, the rest kept",
			input: "zz 10 bad\n1000\n1000 10 ok\n\n1000 0 empty\nffffffffffffff00 200 wraps\n",
			want:  map[uint64]string{0x1000: "ok"},
			stats: Stats{Entries: 3, Malformed: 2, FirstBad: 1, Empty: 1, Wrapping: 1},
		},
		{
			name:  "a line too long",
			input: "1000 10 " + strings.Repeat("x", MaxLine) + "\n2000 10 ok\n",
			want:  map[uint64]string{0x1000: "", 0x2000: "ok"},
			stats: Stats{Entries: 1, Malformed: 1, FirstBad: 1},
		},
		{
			name:  "no final newline",
			input: "1000 10 last",
			want:  map[uint64]string{0x1000: "last"},
			stats: Stats{Entries: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(strings.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			for addr, want := range tc.want {
				seg, ok := m.Lookup(addr)
				got := ""
				if ok {
					if got, err = m.Name(strings.NewReader(tc.input), seg); err != nil {
						t.Fatal(err)
					}
				}
				if got != want || ok != (want != "") {
					t.Errorf("Lookup(%#x) = %q, %v; want %q", addr, got, ok, want)
				}
			}
			if m.Stats != tc.stats {
				t.Errorf("Stats = %+v, want %+v", m.Stats, tc.stats)
			}
		})
	}
}

func TestRanges(t *testing.T) {
	m, err := Parse(strings.NewReader("1000 10 a\n1010 10 b\n2000 10 c\n1008 4 d\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Ranges()
	want := [][2]uint64{{0x1000, 0x1020}, {0x2000, 0x2010}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Ranges() = %x, want %x", got, want)
	}
}

// FuzzParse: any input parses without panicking, and every address of
// every range is named by exactly the lookup's entry.
func FuzzParse(f *testing.F) {
	f.Add("7f8c2e746440 3c8 JS:*work /app.js:3:14\n1000 100 old\n1080 100 new\n")
	f.Add("0x00007fefc8ec7a20 0x0000000000000298 int App.hot(int[])\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, sp := range m.segs {
			if name, err := m.Name(strings.NewReader(s), sp.segment()); err != nil || strings.ContainsAny(name, "\n") {
				t.Fatalf("segment %+v: name %q, %v", sp, name, err)
			}
		}
		prev := uint64(0)
		for i, r := range m.Ranges() {
			if r[1] <= r[0] || (i > 0 && r[0] < prev) {
				t.Fatalf("range %d %x out of order or empty", i, r)
			}
			prev = r[1]
			if _, ok := m.Lookup(r[0]); !ok {
				t.Fatalf("start of range %x has no name", r)
			}
			if _, ok := m.Lookup(r[1] - 1); !ok {
				t.Fatalf("end of range %x has no name", r)
			}
		}
	})
}

// TestAnonymous: the names /proc/PID/maps and perf's MMAP records give
// anonymous memory, and names of files.
func TestAnonymous(t *testing.T) {
	for _, name := range []string{"", "//anon", "[heap]", "[anon:jit code]", "[anon_shmem:x]", "/memfd:doublemapper (deleted)", "/dev/zero (deleted)", "/dev/zero", "/anon_hugepage (deleted)"} {
		if !Anonymous(name) {
			t.Errorf("Anonymous(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"/usr/bin/php8.2", "[vdso]", "[stack]", "/lib/libc.so.6", "/tmp/perf-1.map", "/dev/shm/code", "anon"} {
		if Anonymous(name) {
			t.Errorf("Anonymous(%q) = true, want false", name)
		}
	}
}

// TestResolveEveryAddress: on random maps of overlapping entries, every
// address is named by the last line in the file that covers it, as a
// scan of the lines from the last finds it, and the overlaps are counted
// as before.
func TestResolveEveryAddress(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		var b strings.Builder
		type line struct{ start, size uint64 }
		var lines []line
		for i := range 1 + rng.IntN(30) {
			l := line{uint64(rng.IntN(200)), uint64(rng.IntN(40))}
			lines = append(lines, l)
			fmt.Fprintf(&b, "%x %x n%d\n", l.start, l.size, i)
		}
		input := b.String()
		m, err := Parse(strings.NewReader(input))
		if err != nil {
			t.Fatal(err)
		}
		for addr := uint64(0); addr < 260; addr++ {
			want := ""
			for i := len(lines) - 1; i >= 0; i-- {
				if l := lines[i]; addr >= l.start && addr < l.start+l.size {
					want = fmt.Sprintf("n%d", i)
					break
				}
			}
			got := ""
			if seg, ok := m.Lookup(addr); ok {
				got, _ = m.Name(strings.NewReader(input), seg)
			}
			if got != want {
				t.Fatalf("round %d, %#x: %q, want %q\n%s", round, addr, got, want, input)
			}
		}
		for i := 1; i < len(m.segs); i++ {
			if a, b := m.segs[i-1], m.segs[i]; a.end > b.start || a.end == b.start && a.name == b.name {
				t.Fatalf("round %d: segments %+v and %+v overlap or are not merged", round, a, b)
			}
		}
	}
}
