package perfdata

import (
	"strings"
	"testing"
)

// TestConverterEscapesNames: the names the recording gives (mapped files,
// commands, event names) go into the profile with their characters that
// are not printable escaped, since reports print them as they are;
// printable ones unchanged.
func TestConverterEscapesNames(t *testing.T) {
	ev := cpuClock(true)
	ev.Name = "cpu\x1b[31m-clock"
	rec := synthetic([]Attr{ev},
		comm(10, 10, 1, "\x1b]0;pwned\x07", true),
		mmap2(10, 2, 0x400000, 0x1000, "/bin/prog\x1b[2J"),
		mmap2(10, 2, 0x500000, 0x1000, "/lib/libé.so"),
	)
	p, _ := convert(t, rec, Options{},
		sample(rec, 10, 10, 10, 100, markerUser, 0x400100, 0x500100))
	var names []string
	for _, m := range p.Mapping {
		names = append(names, m.File)
	}
	names = append(names, p.Sample[0].Label["comm"][0], p.SampleType[1].Type, p.PeriodType.Type)
	want := []string{`/bin/prog\x1b[2J`, "/lib/libé.so", `\x1b]0;pwned\a`, `cpu\x1b[31m-clock`, `cpu\x1b[31m-clock`}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names %q, want %q", names, want)
	}
}
