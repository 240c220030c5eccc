package perfdata

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// TestTruncatedAnywhere cuts a real recording (perf record -g) at 200
// places, its header, attributes, data and features included: a cut
// inside the data section or after it gives the samples of the records
// whole before the cut, as a walk of the records counts them, and one
// note saying where the file was cut; a cut before the first sample is
// an error that says so; a file shorter than the header says that. No
// cut loses the samples before it.
func TestTruncatedAnywhere(t *testing.T) {
	b := goldenRecording(t)
	le := binary.LittleEndian
	data, dataOff := dataSection(b)
	dataEnd := dataOff + len(data)
	// samplesBefore counts the samples whole before cut.
	samplesBefore := func(cut int) int64 {
		n := int64(0)
		for off := dataOff; off+8 <= min(cut, dataEnd); {
			size := int(le.Uint16(b[off+6:]))
			if off+size > cut {
				break
			}
			if le.Uint32(b[off:]) == RecordSample {
				n++
			}
			off += size
		}
		return n
	}
	read := 0
	for i := 1; i < 200; i++ {
		cut := len(b) * i / 200
		f, err := open(t, b[:cut])
		if err == nil {
			var conv *Conversion
			p, c, perr := f.Profile(Options{})
			err, conv = perr, c
			if err == nil {
				read++
				if got, want := totalCount(p), samplesBefore(cut); got != want {
					t.Errorf("cut at %d: %d samples, want %d", cut, got, want)
				}
				want := fmt.Sprintf("x.data is truncated at byte %d of ", cut)
				n := 0
				for _, note := range conv.Notes {
					if strings.HasPrefix(note, want) && strings.HasSuffix(note, " (the recording was cut short); the samples up to there are shown") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("cut at %d: notes %q, want one starting %q", cut, conv.Notes, want)
				}
				continue
			}
		}
		var want string
		switch {
		case cut < fileHeaderSize:
			want = fmt.Sprintf("x.data: too short to be a perf.data file (%d bytes; the header alone is 104)", cut)
		case samplesBefore(cut) == 0:
			want = fmt.Sprintf("x.data: truncated at byte %d of ", cut)
		default:
			t.Errorf("cut at %d, with %d samples before it: %v", cut, samplesBefore(cut), err)
			continue
		}
		if !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "x.data") != 1 {
			t.Errorf("cut at %d: error %q, want one starting %q and naming the file once", cut, err, want)
		}
	}
	if read < 190 {
		t.Errorf("only %d of 199 cuts read", read)
	}
}
