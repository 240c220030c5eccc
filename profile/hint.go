package profile

import (
	"github.com/google/pprof/profile"
)

// Field numbers of the profile.proto messages that scan reads.
const (
	profileMapping     = 3
	profileLocation    = 4
	profileStringTable = 6

	mappingID              = 1
	mappingFilename        = 5
	mappingHasFunctions    = 7
	mappingHasFilenames    = 8
	mappingHasLineNumbers  = 9
	mappingHasInlineFrames = 10

	locationMappingID = 2
	locationAddress   = 3
	locationLine      = 4
)

// Protocol buffer wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// A Hint is what a quick scan of an encoded proto profile finds before
// the profile is parsed (see [ParseLimitHint]): enough for a caller to
// start reading the files the profile's symbolization will need.
type Hint struct {
	// Mappings are the mappings that a location refers to, the ones
	// pprof's symbolizer may open. They carry only File, HasFunctions,
	// HasFilenames, HasLineNumbers and HasInlineFrames, as the parsed
	// profile will.
	Mappings []*profile.Mapping
	// JITAddresses are the addresses, in profile order, of the
	// locations with no line in no mapping or in an anonymous one (no
	// file): the ones only a JIT object can symbolize, which [Extend]
	// attaches to the object that holds them. (Extend attaches the
	// addresses of a [0, ^0) mapping named after a JIT object too; that
	// file is among Mappings.)
	JITAddresses []uint64
}

// scan returns the hint of the encoded profile data; it reads the
// mappings, the locations' mapping IDs, addresses and whether they have
// lines, and the string table, without decoding anything else. As the
// full decoder does, a field given twice keeps its last value, and of
// two mappings with one ID the locations refer to the last. ok is false
// if data is not a sequence of well-formed fields, or a mapping's file
// is not in the string table.
//
// It reads data twice: first the mappings and the string table, wherever
// they are, then the locations, each checked against its mapping as it
// is met, so that nothing is kept per location (a profile's locations
// outnumber its mappings by thousands).
func scan(data []byte) (h Hint, ok bool) {
	var strs [][]byte
	var ms []*profile.Mapping
	var files []int64 // string index of each mapping's file
	for rest := data; len(rest) > 0; {
		field, wire, _, body, next, ok := nextField(rest)
		if !ok {
			return Hint{}, false
		}
		rest = next
		if wire != wireBytes {
			continue
		}
		switch field {
		case profileStringTable:
			strs = append(strs, body)
		case profileMapping:
			m, file, ok := scanMapping(body)
			if !ok {
				return Hint{}, false
			}
			ms = append(ms, m)
			files = append(files, file)
		}
	}
	byID := make(map[uint64]*profile.Mapping, len(ms))
	for i, m := range ms {
		if files[i] < 0 || files[i] >= int64(len(strs)) {
			return Hint{}, false
		}
		m.File = string(strs[files[i]])
		byID[m.ID] = m
	}
	used := make(map[uint64]bool, len(ms))
	// Neighbouring locations mostly share a mapping: the last one looked
	// up is kept.
	var last *profile.Mapping
	lastID, looked := uint64(0), false
	for rest := data; len(rest) > 0; {
		field, wire, _, body, next, _ := nextField(rest) // well-formed: read above
		rest = next
		if wire != wireBytes || field != profileLocation {
			continue
		}
		l, ok := scanLocation(body)
		if !ok {
			return Hint{}, false
		}
		if !looked || l.mappingID != lastID {
			lastID, last, looked = l.mappingID, byID[l.mappingID], true
			used[l.mappingID] = true
		}
		if l.address != 0 && !l.hasLine && (last == nil || last.File == "") {
			h.JITAddresses = append(h.JITAddresses, l.address)
		}
	}
	for _, m := range ms {
		if used[m.ID] {
			h.Mappings = append(h.Mappings, m)
		}
	}
	return h, true
}

// scanMapping reads the fields of one Mapping message that scan
// returns, and the string index of its file.
func scanMapping(data []byte) (m *profile.Mapping, file int64, ok bool) {
	m = &profile.Mapping{}
	for len(data) > 0 {
		field, wire, v, _, rest, ok := nextField(data)
		if !ok {
			return nil, 0, false
		}
		if wire == wireVarint {
			switch field {
			case mappingID:
				m.ID = v
			case mappingFilename:
				file = int64(v)
			case mappingHasFunctions:
				m.HasFunctions = v != 0
			case mappingHasFilenames:
				m.HasFilenames = v != 0
			case mappingHasLineNumbers:
				m.HasLineNumbers = v != 0
			case mappingHasInlineFrames:
				m.HasInlineFrames = v != 0
			}
		}
		data = rest
	}
	return m, file, true
}

// A scannedLocation is what scan reads of one Location message.
type scannedLocation struct {
	mappingID, address uint64
	hasLine            bool
}

// scanLocation reads one Location message.
func scanLocation(data []byte) (l scannedLocation, ok bool) {
	for len(data) > 0 {
		field, wire, v, _, rest, ok := nextField(data)
		if !ok {
			return scannedLocation{}, false
		}
		switch {
		case wire == wireVarint && field == locationMappingID:
			l.mappingID = v
		case wire == wireVarint && field == locationAddress:
			l.address = v
		case wire == wireBytes && field == locationLine:
			l.hasLine = true
		}
		data = rest
	}
	return l, true
}

// nextField splits the first field off data: its number, wire type, the
// value of a varint field, the body of a length-delimited one, and what
// follows. ok is false if data does not start with a well-formed field.
func nextField(data []byte) (field uint64, wire int, value uint64, body, rest []byte, ok bool) {
	key, n := uvarint(data)
	if n <= 0 {
		return 0, 0, 0, nil, nil, false
	}
	data = data[n:]
	field, wire = key>>3, int(key&7)
	switch wire {
	case wireVarint:
		v, n := uvarint(data)
		if n <= 0 {
			return 0, 0, 0, nil, nil, false
		}
		return field, wire, v, nil, data[n:], true
	case wireFixed64:
		if len(data) < 8 {
			return 0, 0, 0, nil, nil, false
		}
		return field, wire, 0, nil, data[8:], true
	case wireFixed32:
		if len(data) < 4 {
			return 0, 0, 0, nil, nil, false
		}
		return field, wire, 0, nil, data[4:], true
	case wireBytes:
		size, n := uvarint(data)
		if n <= 0 || size > uint64(len(data)-n) {
			return 0, 0, 0, nil, nil, false
		}
		data = data[n:]
		return field, wire, 0, data[:size], data[size:], true
	}
	return 0, 0, 0, nil, nil, false
}

// uvarint decodes the varint at the start of data and returns it and its
// length, or a length of 0 if data does not start with one. Like
// upstream's decoder (profile/proto.go's decodeVarint), whose verdicts
// the scan must share, it takes up to 10 bytes and ignores the bits
// beyond 64, where encoding/binary reports an overflow.
func uvarint(data []byte) (uint64, int) {
	var u uint64
	for i := 0; i < 10 && i < len(data); i++ {
		u |= uint64(data[i]&0x7f) << (7 * i)
		if data[i]&0x80 == 0 {
			return u, i + 1
		}
	}
	return 0, 0
}
