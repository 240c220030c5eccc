package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// Profile data as pprof reads it: optionally gzipped, then either a
// profile.proto message or one of the legacy formats. Only legacy
// formats carry a memory map, a copy of /proc/PID/maps:
//
//   - text formats (gperftools heap, growth, contention, thread; Go's
//     legacy goroutine and threadcreate counts) put it after a line
//     containing "MAPPED_LIBRARIES:" or "--- Memory map: ---";
//   - the binary gperftools CPU format puts it right after the
//     end-of-data record of its sample words.

// memoryMapSentinels are the lines that start the memory map of a text
// legacy profile; a line containing one of them starts it.
var memoryMapSentinels = [][]byte{
	[]byte("--- Memory map: ---"),
	[]byte("MAPPED_LIBRARIES:"),
}

// Parse parses profile data the way pprof's profile.ParseData does, and
// also returns the memory map of a legacy profile, for Extend: the text
// of its copy of /proc/PID/maps, empty but not nil when it has none. It
// is nil for a proto profile, and for a Java legacy profile, which comes
// symbolized and without a map. Errors are worded as ParseData's. The
// data is decompressed and parsed once.
func Parse(data []byte) (p *profile.Profile, memoryMap []byte, err error) {
	return ParseLimit(data, DefaultMaxDecompressed)
}

// DefaultMaxDecompressed is the most bytes Parse decompresses a gzipped
// profile to: real profiles are megabytes, and a few kilobytes of gzip can
// claim gigabytes of zeros.
const DefaultMaxDecompressed = 128 << 20

// ParseLimit is Parse with a limit on the size of the decompressed data:
// a profile that decompresses to more is an error saying so.
func ParseLimit(data []byte, maxDecompressed int64) (p *profile.Profile, memoryMap []byte, err error) {
	return ParseLimitHint(data, maxDecompressed, nil)
}

// ParseLimitHint is ParseLimit, which first calls hint, unless it is nil,
// with what a quick scan of a proto profile finds (see [Hint]), before
// the profile is parsed: the caller can start reading the mapped files
// and the JIT objects while the parse runs. hint is not called for data
// that is not a well-formed proto profile as far as the scan reads it,
// or that has neither mappings nor addresses for the JIT stage.
func ParseLimitHint(data []byte, maxDecompressed int64, hint func(Hint)) (p *profile.Profile, memoryMap []byte, err error) {
	if data, err = decompress(data, maxDecompressed); err != nil {
		return nil, nil, err
	}
	if hint != nil {
		if h, ok := scan(data); ok && (len(h.Mappings) > 0 || len(h.JITAddresses) > 0) {
			hint(h)
		}
	}
	// A proto profile parses as one; anything else is handed to
	// ParseData, which tries proto again (failing as fast as before),
	// then the legacy formats, and words the errors.
	if p, err = profile.ParseUncompressed(data); err == nil {
		if err := p.CheckValid(); err != nil {
			return nil, nil, fmt.Errorf("malformed profile: %w", err)
		}
		return p, nil, nil
	}
	if p, m := parseWithoutMap(data); p != nil {
		return p, m, nil
	}
	if p, err = profile.ParseData(data); err != nil {
		return nil, nil, err
	}
	if java(p) {
		return p, nil, nil
	}
	if m := legacyMemoryMap(data); m != nil {
		return p, m, nil
	}
	return p, []byte{}, nil
}

// java reports whether p is a Java legacy profile, which comes
// symbolized.
func java(p *profile.Profile) bool {
	for _, l := range p.Location {
		if len(l.Line) > 0 {
			return true
		}
	}
	return false
}

// parseWithoutMap parses legacy profile data that has a memory map
// without it, and returns the map: Extend rebuilds the mappings from
// it, so that upstream's parse of it (a million mappings took 6 s) and
// the mappings it made would be thrown away. The profile is the one
// ParseData gives, but for its mappings, which Extend replaces. It
// returns nil when the data has no memory map, or one upstream could
// not read, or is a Java profile, or does not parse without its map: the
// caller then parses it whole, as before.
func parseWithoutMap(data []byte) (*profile.Profile, []byte) {
	m := legacyMemoryMap(data)
	if len(m) == 0 {
		return nil, nil
	}
	for rest := m; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(line) > maxMapsLine {
			return nil, nil // upstream's error, from ParseData
		}
	}
	p, err := profile.ParseData(data[:len(data)-len(m)])
	if err != nil || java(p) {
		return nil, nil
	}
	return p, m
}

// ErrTooLarge is wrapped by the error of a profile that decompresses to
// more than the limit.
var ErrTooLarge = errors.New("decompressed profile too large")

// decompress returns data with a gzip wrapper removed, if it has one, and
// at most limit bytes long.
func decompress(data []byte, limit int64) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing profile: %w", err)
	}
	// Read in chunks, joined once the size is known: a stream that
	// exceeds the limit costs the limit, not twice it.
	const chunk = 1 << 20
	var chunks [][]byte
	var total int64
	for {
		b := make([]byte, chunk)
		n, err := io.ReadFull(gz, b)
		chunks = append(chunks, b[:n])
		total += int64(n)
		if total > limit {
			return nil, fmt.Errorf("%w: %d bytes of gzip decompress to more than %d bytes (the limit; -max_profile_mb raises it)", ErrTooLarge, len(data), limit)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decompressing profile: %w", err)
		}
	}
	out := make([]byte, 0, total)
	for _, b := range chunks {
		out = append(out, b...)
	}
	return out, nil
}

// legacyMemoryMap returns the memory map section of uncompressed legacy
// profile data: the text that pprof parses as /proc/PID/maps. It returns
// nil when the data has no memory map (a proto profile, a Java profile,
// or a legacy profile written without one).
func legacyMemoryMap(data []byte) []byte {
	if m, ok := cpuMemoryMap(data); ok {
		return m
	}
	rest := data
	for len(rest) > 0 {
		line := rest
		next := []byte(nil)
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, next = rest[:i], rest[i+1:]
		}
		for _, sentinel := range memoryMapSentinels {
			if bytes.Contains(line, sentinel) {
				return next
			}
		}
		rest = next
	}
	return nil
}

// cpuMemoryMap recognizes the binary gperftools CPU profile format and
// returns the text after its end-of-data record. The format is a
// sequence of machine words of 4 or 8 bytes, in either byte order:
//
//	header:  0, 3, 0, sampling period (µs), 0
//	sample:  count, depth N, then N program counters
//	end:     0, 1, 0
//
// A header whose third word is 1 is a Java CPU profile, which has no
// memory map.
func cpuMemoryMap(data []byte) ([]byte, bool) {
	type wordReader struct {
		size  int
		order binary.ByteOrder
	}
	for _, wr := range []wordReader{{4, binary.LittleEndian}, {4, binary.BigEndian}, {8, binary.LittleEndian}, {8, binary.BigEndian}} {
		word := func(b []byte, i int) (uint64, bool) {
			off := i * wr.size
			if off < 0 || off+wr.size > len(b) {
				return 0, false
			}
			if wr.size == 4 {
				return uint64(wr.order.Uint32(b[off:])), true
			}
			return wr.order.Uint64(b[off:]), true
		}
		var hdr [5]uint64
		ok := true
		for i := range hdr {
			if hdr[i], ok = word(data, i); !ok {
				break
			}
		}
		if !ok || hdr[0] != 0 || hdr[1] != 3 || hdr[3] == 0 || hdr[4] != 0 || hdr[2] > 1 {
			continue
		}
		if hdr[2] == 1 {
			return nil, true // Java
		}
		b := data[5*wr.size:]
		for len(b) > 0 {
			count, ok1 := word(b, 0)
			depth, ok2 := word(b, 1)
			if !ok1 || !ok2 || depth > uint64(len(b)/wr.size) {
				return nil, true // malformed or truncated; pprof reports it
			}
			n := 2 + int(depth)
			pc0, _ := word(b, 2)
			if n*wr.size > len(b) {
				return nil, true
			}
			b = b[n*wr.size:]
			if count == 0 && depth == 1 && pc0 == 0 {
				return b, true
			}
		}
		return nil, true // no end-of-data record: no map
	}
	return nil, false
}
