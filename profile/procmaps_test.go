package profile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestProcMapsAsUpstream: memory maps parse to the mappings upstream's
// profile.ParseProcMaps gives, on real /proc/PID/maps lines, on lines
// upstream reads its own ways (brief format, glog prefixes, attributes,
// 0x prefixes, tabs, CRLF) and on random edits of them.
func TestProcMapsAsUpstream(t *testing.T) {
	real := []string{
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon",
		"00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon",
		"7f2b37e1f000-7f2b37e2d000 r-xp 00000000 fd:01 1312 /lib/x86_64-linux-gnu/libz.so.1.2.11 (deleted)",
		"7ffd5c1fe000-7ffd5c200000 r-xp 00000000 00:00 0                          [vdso]",
		"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 ",
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
		"",
		"7F0000100000-7F0000200000 r-xp 0000ABCD 0A:0B 0",
		"7f0000200000-7f0000300000 r-xp 00001000 08:01 12 /path with spaces/lib.so",
		"7f0000300000-7f0000400000 r-xp 00001000 08:01 12 /a=b/lib.so",
	}
	other := []string{
		"0x400000-0x500000 /bin/brief (@1000) abcdef",
		"I0101 12:00:00.000000 123 file.cc:12] 00400000-00452000 r-xp 00000000 08:02 1 /bin/x",
		"$build=abc",
		"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /lib/$build.so",
		"7f0000000000-7f0000100000  r-xp 00000000 00:00 0 /lib/two-spaces.so",
		"7f0000000000-7f0000100000\tr-xp 00000000 00:00 0 /lib/tab.so",
		"7f0000000000-7f0000100000 r-xs 00000000 00:00 0 /dev/shared",
		"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /lib/a:1] b",
		"deadbeef",
		"7F0000100000-7F0000200000 R-XP 00000000 00:00 0",
		"12345678901234567-7f0000100000 r-xp 00000000 00:00 0 /too/long",
		"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /crlf\r",
	}
	check := func(input string) {
		t.Helper()
		want, wantErr := profile.ParseProcMaps(strings.NewReader(input))
		got, gotErr := parseProcMaps([]byte(input))
		if (wantErr != nil) != (gotErr != nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ngot %s, %v\nwant %s, %v", input, describeMaps(got), gotErr, describeMaps(want), wantErr)
		}
	}
	check(strings.Join(real, "\n"))
	if _, ok := fastProcMaps([]byte(strings.Join(real, "\n"))); !ok {
		t.Error("real lines were not parsed here")
	}
	for _, l := range append(append([]string{}, real...), other...) {
		check(l)
		check(l + "\n" + real[0])
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("0123456789abcdefx-: []=\t\r/pwr\n")
	for range 20000 {
		b := []byte(real[rng.IntN(len(real))] + "\n" + other[rng.IntN(len(other))])
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(b))
	}
	long := real[0] + strings.Repeat("x", maxMapsLine)
	check(long)
}

func describeMaps(ms []*profile.Mapping) string {
	var b bytes.Buffer
	for _, m := range ms {
		fmt.Fprintf(&b, "[%#x, %#x) %#x %q %q; ", m.Start, m.Limit, m.Offset, m.File, m.BuildID)
	}
	return b.String()
}

// FuzzProcMaps: any memory map parses to upstream's mappings.
func FuzzProcMaps(f *testing.F) {
	f.Add([]byte("00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n7ffd5c1fe000-7ffd5c200000 r-xp 00000000 00:00 0 [vdso]\n"))
	f.Add([]byte("0x400000-0x500000 /bin/brief (@1000) abcdef\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := profile.ParseProcMaps(bytes.NewReader(b))
		got, gotErr := parseProcMaps(b)
		if (wantErr != nil) != (gotErr != nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %s, %v\nwant %s, %v", describeMaps(got), gotErr, describeMaps(want), wantErr)
		}
	})
}
