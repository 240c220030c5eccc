// Package perfdata reads perf.data files, the recordings of Linux
// `perf record` (tools/perf/Documentation/perf.data-file-format.txt):
// the PERFILE2 header, the event attributes, the records of the data
// section and the feature sections after it.
//
// [Open] reads the header, the attributes and the feature sections
// pprof uses (build ids, hostname, OS release, command line, event
// descriptions), or, in the pipe mode of perf record -o -, the records
// that stand for them; [File.Records] then streams the data section
// record by record, decoding MMAP, MMAP2, COMM, FORK, EXIT and SAMPLE,
// decompressing the COMPRESSED records of perf record -z, and skipping
// every other record by its size (and the AUX area data that follows
// an AUXTRACE record), then the per-thread files of perf record
// --threads ([File.AddThreadData]). Both byte orders are read, and
// recordings perf record did not finish. Every size is checked against
// the file before anything is read or allocated from it; errors name
// the file and the offset.
package perfdata

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"runtime/debug"
	"slices"
)

// Magic is the first word of a perf.data file.
const Magic = "PERFILE2"

// Sample type bits (perf_event_attr.sample_type).
const (
	SampleIP         = 1 << 0
	SampleTID        = 1 << 1
	SampleTime       = 1 << 2
	SampleAddr       = 1 << 3
	SampleRead       = 1 << 4
	SampleCallchain  = 1 << 5
	SampleID         = 1 << 6
	SampleCPU        = 1 << 7
	SamplePeriod     = 1 << 8
	SampleStreamID   = 1 << 9
	SampleRaw        = 1 << 10
	SampleBranch     = 1 << 11
	SampleRegsUser   = 1 << 12
	SampleStackUser  = 1 << 13
	SampleWeight     = 1 << 14
	SampleDataSrc    = 1 << 15
	SampleIdentifier = 1 << 16
)

// Record types.
const (
	RecordMMAP          = 1
	RecordComm          = 3
	RecordExit          = 4
	RecordFork          = 7
	RecordSample        = 9
	RecordMMAP2         = 10
	RecordFinishedRound = 68
	// Records compressed with Zstandard (perf record -z): one stream of
	// records cut into pieces, a piece a record. The second kind (newer
	// perf) puts the piece's size first and pads the record to 8 bytes.
	RecordCompressed  = 81
	RecordCompressed2 = 83
)

// Callchain context markers: entries of a callchain that say whose
// frames follow (kernel, user, ...), not addresses.
const contextMax = ^uint64(0) - 4095 + 1 // PERF_CONTEXT_MAX = (u64)-4095

// IsContextMarker reports whether a callchain entry is a context marker.
func IsContextMarker(ip uint64) bool { return ip >= contextMax }

// MarkerKernel starts the kernel part of a callchain.
const MarkerKernel = ^uint64(0) - 128 + 1 // PERF_CONTEXT_KERNEL = (u64)-128

// markerUser starts the user part of a callchain.
const markerUser = ^uint64(0) - 512 + 1 // PERF_CONTEXT_USER = (u64)-512

// An Attr is one event of the recording.
type Attr struct {
	Type, Config uint64
	SampleType   uint64
	ReadFormat   uint64
	SampleIDAll  bool
	Freq         bool
	// UseClockID says the sample times are of the clock ClockID (perf
	// record -k), not perf's own: -k 1 is CLOCK_MONOTONIC, the clock
	// jitdump writers stamp their records with.
	UseClockID     bool
	ClockID        int32
	Period         uint64 // sample_period, or the frequency with Freq
	IDs            []uint64
	Name           string // from the event descriptions, if any
	BranchSampleTy uint64
	RegsUser       uint64
	SampleRegsIntr uint64
}

// A File is an open perf.data file.
type File struct {
	Name      string
	ByteOrder binary.ByteOrder
	Attrs     []Attr
	// Features read from the feature sections; empty when absent.
	Hostname, OSRelease string
	Arch                string // the machine, as uname -m says (x86_64, aarch64)
	CmdLine             []string
	BuildIDs            map[string][]byte // by file name
	// Pipe reports a recording of perf record's pipe mode (perf record
	// -o -, saved): a stream of records, the attributes and features
	// among them, no header; a stream cut short is read to its last
	// whole record.
	Pipe bool
	// Unfinished reports a recording perf record did not finish (killed,
	// or copied while it ran): its header gives no data size, so the
	// data section is read to the last whole record of the file, and the
	// feature sections perf writes after it at the end (build IDs, event
	// names, ...) are missing.
	Unfinished bool
	// Truncated says where a recording was cut short (copied in part, a
	// disk full), if it was: its data section is read to its last whole
	// record, and the feature sections wholly in the file are read.
	Truncated Truncation

	r              io.ReaderAt
	size           int64
	dataOff, dataN int64
	streams        []stream // the data section first
	byID           map[uint64]*Attr
	budget         Budget           // of what -z records decompress to; nil for none
	budgetStep     int64            // what is taken from it at a time
	decoded        map[string]int64 // of each stream, what the budget gave (budget.go)
	granted        struct {         // the last stream allowed, and how far
		name string
		pos  int64
	}
}

// A FormatError reports a malformed perf.data file.
type FormatError struct {
	File string
	Off  int64
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Off < 0 { // of the file as a whole
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s at offset %#x", e.File, e.Msg, e.Off)
}

func (f *File) errorf(off int64, format string, args ...any) error {
	return &FormatError{File: f.Name, Off: off, Msg: fmt.Sprintf(format, args...)}
}

// header layout of perf_file_header.
const (
	fileHeaderSize = 104
	maxAttrs       = 4096
)

// Open reads the header, the attributes and the feature sections of the
// perf.data file in r, of size bytes; name is used in errors.
func Open(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{Name: name, r: r, size: size, byID: map[uint64]*Attr{}, BuildIDs: map[string][]byte{}}
	var h [fileHeaderSize]byte
	if size < 16 {
		return nil, f.tooShort()
	}
	n, _ := r.ReadAt(h[:min(size, fileHeaderSize)], 0)
	if string(h[:8]) != Magic {
		if string(h[:8]) == "2ELIFREP" {
			f.ByteOrder = binary.BigEndian
		} else {
			return nil, f.errorf(0, "bad magic %q: not a perf.data file", h[:8])
		}
	} else {
		f.ByteOrder = binary.LittleEndian
	}
	bo := f.ByteOrder
	hsize := bo.Uint64(h[8:])
	if hsize == 16 {
		return f.openPipe()
	}
	if hsize == fileHeaderSize && n < fileHeaderSize {
		return nil, f.tooShort()
	}
	if n < fileHeaderSize || hsize < fileHeaderSize {
		return nil, f.errorf(8, "header of %d bytes, want %d", hsize, fileHeaderSize)
	}
	attrSize := bo.Uint64(h[16:])
	attrsOff, attrsN := int64(bo.Uint64(h[24:])), int64(bo.Uint64(h[32:]))
	f.dataOff, f.dataN = int64(bo.Uint64(h[40:])), int64(bo.Uint64(h[48:]))
	if err := f.checkSections(attrsOff, attrsN); err != nil {
		return nil, err
	}
	// No data size, and more after the data's start than a feature
	// table of the features announced (a finished recording with no
	// records has one): perf record did not finish.
	if f.dataN == 0 && size > f.dataOff && !f.featuresFit(h[72:104]) {
		f.Unfinished = true
		f.dataN = size - f.dataOff
	}
	if attrSize < 16+64 || attrSize > 1<<16 {
		return nil, f.errorf(16, "attribute size %d", attrSize)
	}
	if attrsN%int64(attrSize) != 0 {
		return nil, f.errorf(32, "attribute section of %d bytes is not a multiple of the %d-byte attribute", attrsN, attrSize)
	}
	nattr := attrsN / int64(attrSize)
	if nattr == 0 || nattr > maxAttrs {
		return nil, f.errorf(32, "%d attributes", nattr)
	}
	buf := make([]byte, attrsN)
	if _, err := r.ReadAt(buf, attrsOff); err != nil {
		return nil, f.errorf(attrsOff, "reading the attributes: %v", err)
	}
	eventAttrSize := int(attrSize) - 16 // each entry: perf_event_attr, then a file section of ids
	idSecs := idSections{f: f}
	for i := range int(nattr) {
		b := buf[i*int(attrSize):]
		a, err := f.parseAttr(b[:eventAttrSize], attrsOff+int64(i)*int64(attrSize))
		if err != nil {
			return nil, err
		}
		idsOff, idsN := int64(bo.Uint64(b[eventAttrSize:])), int64(bo.Uint64(b[eventAttrSize+8:]))
		if err := idSecs.add(idsOff, idsN, attrsOff+int64(i)*int64(attrSize)+int64(eventAttrSize)); err != nil {
			return nil, err
		}
		ids := make([]byte, idsN)
		if _, err := r.ReadAt(ids, idsOff); err != nil {
			return nil, f.errorf(idsOff, "reading event ids: %v", err)
		}
		for k := 0; k+8 <= len(ids); k += 8 {
			a.IDs = append(a.IDs, bo.Uint64(ids[k:]))
		}
		f.Attrs = append(f.Attrs, a)
	}
	for i := range f.Attrs {
		for _, id := range f.Attrs[i].IDs {
			f.byID[id] = &f.Attrs[i]
		}
	}
	f.streams = []stream{{r: r, off: f.dataOff, n: f.dataN, name: name}}
	if f.Unfinished || f.Truncated.At > 0 && f.Truncated.At < f.dataOff+f.dataN {
		return f, nil
	}
	if err := f.readFeatures(h[72:104]); err != nil {
		return nil, err
	}
	return f, nil
}

// Records of pipe mode that stand for the header and its features, and
// records followed by data of a size they give.
const (
	recordHeaderAttr        = 64
	recordHeaderTracingData = 66 // u32 size; followed by that many bytes
	recordHeaderBuildID     = 67
	recordAuxtrace          = 71 // u64 size; followed by that many bytes
	recordEventUpdate       = 78
	recordHeaderFeature     = 80
	eventUpdateName         = 2 // PERF_EVENT_UPDATE__NAME
)

// openPipe reads a pipe-mode recording's attributes, features, build ids
// and event names from its records.
func (f *File) openPipe() (_ *File, err error) {
	f.Pipe = true
	f.dataOff, f.dataN = 16, f.size-16
	f.streams = []stream{{r: f.r, off: f.dataOff, n: f.dataN, name: f.Name}}
	defer f.catchFaults(&err)()
	bo := f.ByteOrder
	type feature struct {
		bit  int
		data []byte
	}
	var features []feature
	names := map[uint64]string{} // by event id
	fr := f.rawReader(0)
	for {
		typ, _, off, body, err := fr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch typ {
		case recordHeaderAttr:
			if len(body) < 8 {
				return nil, f.errorf(off, "attribute record of %d bytes", len(body)+8)
			}
			size := int(bo.Uint32(body[4:]))
			if size == 0 {
				size = 64 // PERF_ATTR_SIZE_VER0
			}
			if size > len(body) {
				return nil, f.errorf(off, "attribute of %d bytes in a record of %d", size, len(body)+8)
			}
			if len(f.Attrs) == maxAttrs {
				return nil, f.errorf(off, "more than %d attributes", maxAttrs)
			}
			a, err := f.parseAttr(body[:size], off+8)
			if err != nil {
				return nil, err
			}
			for ids := body[size:]; len(ids) >= 8; ids = ids[8:] {
				a.IDs = append(a.IDs, bo.Uint64(ids))
			}
			f.Attrs = append(f.Attrs, a)
		case recordHeaderFeature:
			if len(body) >= 8 && bo.Uint64(body) < numFeatures {
				features = append(features, feature{int(bo.Uint64(body)), bytes.Clone(body[8:])})
			}
		case recordHeaderBuildID:
			f.parseBuildIDs(fr.rec) // the record is one entry of the feature
		case recordEventUpdate:
			if len(body) >= 16 && bo.Uint64(body) == eventUpdateName {
				name := body[16:]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				names[bo.Uint64(body[8:])] = string(name)
			}
		}
	}
	if len(f.Attrs) == 0 {
		return nil, f.errorf(f.dataOff, "pipe-mode recording (perf record -o -) without an attribute record")
	}
	for i := range f.Attrs {
		for _, id := range f.Attrs[i].IDs {
			f.byID[id] = &f.Attrs[i]
		}
	}
	for _, ft := range features {
		f.parseFeature(ft.bit, ft.data)
	}
	for _, id := range slices.Sorted(maps.Keys(names)) { // the first id's name, if an event's ids disagree
		if a := f.byID[id]; a != nil && a.Name == "" {
			a.Name = names[id]
		}
	}
	return f, nil
}

// parseAttr decodes the part of perf_event_attr pprof needs.
func (f *File) parseAttr(b []byte, off int64) (Attr, error) {
	bo := f.ByteOrder
	if len(b) < 64 {
		return Attr{}, f.errorf(off, "attribute of %d bytes", len(b))
	}
	a := Attr{
		Type:       uint64(bo.Uint32(b)),
		Config:     bo.Uint64(b[8:]),
		Period:     bo.Uint64(b[16:]),
		SampleType: bo.Uint64(b[24:]),
		ReadFormat: bo.Uint64(b[32:]),
	}
	flags := bo.Uint64(b[40:])
	a.Freq = flags&(1<<10) != 0
	a.SampleIDAll = flags&(1<<18) != 0
	a.UseClockID = flags&(1<<25) != 0
	// Offsets of perf_event_attr (include/uapi/linux/perf_event.h):
	// branch_sample_type 72, sample_regs_user 80, sample_stack_user 88,
	// clockid 92, sample_regs_intr 96.
	if len(b) >= 80 {
		a.BranchSampleTy = bo.Uint64(b[72:])
	}
	if len(b) >= 96 {
		a.RegsUser = bo.Uint64(b[80:])
		a.ClockID = int32(bo.Uint32(b[92:]))
	}
	if len(b) >= 104 {
		a.SampleRegsIntr = bo.Uint64(b[96:])
	}
	return a, nil
}

// Feature bits of the header's adds_features bitmap.
const (
	featBuildID   = 2
	featHostname  = 3
	featOSRelease = 4
	featArch      = 6
	featCmdLine   = 11
	featEventDesc = 12
	numFeatures   = 256
)

// featuresFit reports whether the bitmap announces features and the
// file has a table of them after the data section whose sections lie in
// the file.
func (f *File) featuresFit(bitmap []byte) bool {
	bo := f.ByteOrder
	n := 0
	for i := range 4 {
		n += bits.OnesCount64(bo.Uint64(bitmap[8*i:]))
	}
	tab := f.dataOff + f.dataN
	if n == 0 || tab < 0 || int64(n)*16 > f.size-tab {
		return false
	}
	entries := make([]byte, 16*n)
	if _, err := f.r.ReadAt(entries, tab); err != nil {
		return false
	}
	for k := 0; k < n; k++ {
		soff, sn := int64(bo.Uint64(entries[16*k:])), int64(bo.Uint64(entries[16*k+8:]))
		if soff < tab+int64(16*n) || sn < 0 || soff > f.size || sn > f.size-soff {
			return false
		}
	}
	return true
}

// readFeatures reads the feature sections the bitmap announces: a table
// of {offset, size} right after the data section, one per feature bit.
// A table or section that runs past the end of the file is the mark of
// a recording cut short (see File.Truncated): the features wholly in
// the file are read, the others left out.
func (f *File) readFeatures(bitmap []byte) error {
	bo := f.ByteOrder
	tableOff := f.dataOff + f.dataN
	var bitsSet []int
	for bit := range numFeatures {
		if bo.Uint64(bitmap[8*(bit/64):])&(1<<(bit%64)) != 0 {
			bitsSet = append(bitsSet, bit)
		}
	}
	tableEnd := tableOff + 16*int64(len(bitsSet))
	if tableEnd > f.size {
		f.truncate(tableEnd)
	}
	for k, bit := range bitsSet {
		var sec [16]byte
		off := tableOff + int64(k)*16
		if off+16 > f.size {
			break
		}
		if _, err := f.r.ReadAt(sec[:], off); err != nil {
			return f.errorf(off, "reading the feature table: %v", err)
		}
		soff, sn := int64(bo.Uint64(sec[:])), int64(bo.Uint64(sec[8:]))
		if soff < 0 || sn < 0 || soff > math.MaxInt64-sn {
			return f.errorf(off, "feature %d section [%#x, +%#x) is impossible", bit, soff, sn)
		}
		if soff+sn > f.size {
			f.truncate(soff + sn)
			continue
		}
		switch bit {
		case featBuildID, featHostname, featOSRelease, featArch, featCmdLine, featEventDesc:
		default:
			continue
		}
		if sn > 64<<20 {
			return f.errorf(off, "feature %d section of %d bytes", bit, sn)
		}
		data := make([]byte, sn)
		if _, err := f.r.ReadAt(data, soff); err != nil {
			return f.errorf(soff, "reading feature %d: %v", bit, err)
		}
		f.parseFeature(bit, data)
	}
	return nil
}

// parseFeature reads the section of feature bit, data.
func (f *File) parseFeature(bit int, data []byte) {
	bo := f.ByteOrder
	switch bit {
	case featBuildID:
		f.parseBuildIDs(data)
	case featHostname:
		f.Hostname, _ = perfString(bo, data)
	case featOSRelease:
		f.OSRelease, _ = perfString(bo, data)
	case featArch:
		f.Arch, _ = perfString(bo, data)
	case featCmdLine:
		if len(data) >= 4 {
			n := bo.Uint32(data)
			rest := data[4:]
			for range min(n, 4096) {
				s, used := perfString(bo, rest)
				if used == 0 {
					break
				}
				f.CmdLine = append(f.CmdLine, s)
				rest = rest[used:]
			}
		}
	case featEventDesc:
		f.parseEventDesc(data)
	}
}

// perfString reads a perf_header_string (u32 length, then that many
// bytes, NUL-padded) and returns it and the bytes it took, 0 if b is
// too short.
func perfString(bo binary.ByteOrder, b []byte) (string, int) {
	if len(b) < 4 {
		return "", 0
	}
	n := int(bo.Uint32(b))
	if n < 0 || n > len(b)-4 {
		return "", 0
	}
	s := b[4 : 4+n]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s), 4 + n
}

// parseBuildIDs reads build id records: header, pid, 24 bytes of id
// (with the size in the header's misc in newer perf), file name.
func (f *File) parseBuildIDs(b []byte) {
	bo := f.ByteOrder
	for len(b) >= 8+4+24 {
		size := int(bo.Uint16(b[6:]))
		misc := bo.Uint16(b[4:])
		if size < 8+4+24 || size > len(b) {
			return
		}
		id := b[12:36]
		if misc&(1<<15) != 0 { // PERF_RECORD_MISC_BUILD_ID_SIZE: size in id[20]
			if n := int(id[20]); n <= 20 {
				id = id[:n]
			}
		} else {
			id = bytes.TrimRight(id[:20], "\x00")
		}
		name := b[36:size]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		f.BuildIDs[string(name)] = append([]byte(nil), id...)
		b = b[size:]
	}
}

// parseEventDesc names the attributes from HEADER_EVENT_DESC.
func (f *File) parseEventDesc(b []byte) {
	bo := f.ByteOrder
	if len(b) < 8 {
		return
	}
	n, attrSize := bo.Uint32(b), int(bo.Uint32(b[4:]))
	b = b[8:]
	for range min(n, maxAttrs) {
		if attrSize <= 0 || len(b) < attrSize+4 {
			return
		}
		b = b[attrSize:]
		nids := int(bo.Uint32(b))
		b = b[4:]
		name, used := perfString(bo, b)
		if used == 0 {
			return
		}
		b = b[used:]
		if nids < 0 || nids > len(b)/8 {
			return
		}
		for k := range nids {
			if a := f.byID[bo.Uint64(b[8*k:])]; a != nil && a.Name == "" {
				a.Name = name
			}
		}
		b = b[8*nids:]
	}
}

// A Record is one decoded record of the data section.
type Record struct {
	Type uint32
	Misc uint16
	// Off is the record's offset in the file; for a record decompressed
	// from the stream of the COMPRESSED records, the offset of the
	// compressed record being read when it was decoded.
	Off int64

	// MMAP and MMAP2.
	PID, TID         uint32
	Addr, Len, Pgoff uint64
	Prot             uint32 // MMAP2 only; 0 with MMAP
	Filename         string
	BuildID          []byte // MMAP2 with an inline build id

	// FORK and EXIT (PID, TID too).
	PPID, PTID uint32 // the parent process and thread

	// LOST: the records lost; LOST_SAMPLES: the samples lost. (LOST,
	// LOST_SAMPLES and SWITCH: PID and TID from the sample_id trailer.)
	Lost uint64

	// COMM.
	Comm string
	Exec bool // COMM from exec

	// SAMPLE (PID, TID too). Time is also set for the other records
	// when their event has sample_id_all and PERF_SAMPLE_TIME (perf
	// record's default): perf writes each CPU's records in turn, so the
	// file's order is not the order of events across CPUs, while their
	// times are. It is 0 for records perf made itself of what was there
	// before the recording began.
	Attr      *Attr
	IP        uint64
	Time      uint64
	Period    uint64
	CPU       uint32
	Callchain []uint64 // with context markers, leaf first
	// With --call-graph dwarf (PERF_SAMPLE_REGS_USER and _STACK_USER):
	// the thread's user registers, in the order of the bits of the
	// event's RegsUser mask (none for a kernel thread), and the top of
	// its user stack from the stack pointer up, as much as perf copied.
	// Both alias the record's buffer.
	RegsUser  []uint64
	StackUser []byte
	// With PERF_SAMPLE_READ of a group of events whose leader samples
	// (perf record -e '{cycles,instructions}:S'): each event's count
	// and id when the sample was taken (the counts grow: what an event
	// counted since its previous sample is the difference).
	Group []ReadValue
}

// A ReadValue is one event's count in a sample's group read.
type ReadValue struct {
	Value, ID uint64
}

// maxRecord bounds one record: the header's size field is 16 bits.
const maxRecord = 1 << 16

// Records calls fn for each record of the data section, in file order,
// then for those of each file AddThreadData added, until fn returns
// false or the data ends. The records of a recording made with perf
// record -z are decompressed from its COMPRESSED records and passed in
// the order of that stream, at the place of the compressed record that
// holds them. A damaged record ends its file; the error, a
// [*FormatError], is returned after the other files are read. The
// Record (and its Callchain) is reused for the next call: copy what you
// keep.
func (f *File) Records(fn func(*Record) bool) error { return f.records(true, fn) }

// records is Records, without the SAMPLE records unless samples is true
// (a pass over the side records: most of a recording is samples).
func (f *File) records(samples bool, fn func(*Record) bool) (err error) {
	defer f.catchFaults(&err)()
	s := &scanner{f: f, samples: samples, fn: fn}
	// A damaged file of perf record --threads ends only that file's
	// records: the first such error is returned at the end.
	var damaged error
	for i := range f.streams {
		err := s.stream(f.rawReader(i))
		if err == errStop {
			break
		}
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			return err
		}
		if damaged == nil {
			damaged = err
		}
	}
	return damaged
}

// rawReader returns a reader of the records of stream i.
func (f *File) rawReader(i int) *rawReader {
	st := f.streams[i]
	r := &rawReader{f: f, name: st.name, ra: st.r, off: st.off, end: st.off + st.n,
		unfinished: i == 0 && (f.Unfinished || f.Pipe || f.cut())}
	if m, ok := st.r.(Mapped); ok && st.off >= 0 && st.n >= 0 && st.off+st.n <= int64(len(m.Bytes())) {
		r.mapped, r.mem, r.released = m, m.Bytes(), st.off
	} else {
		r.r = bufio.NewReaderSize(io.NewSectionReader(st.r, st.off, st.n), 256<<10)
	}
	return r
}

// catchFaults, if f has Mapped streams, has the calling goroutine's
// faults panic, and returns a function to defer that undoes that and
// turns a fault in their bytes into *err, a *FormatError. The bytes of
// a stream are read in place by its records' decoders and fn.
func (f *File) catchFaults(err *error) func() {
	var mapped []stream
	for _, st := range f.streams {
		if _, ok := st.r.(Mapped); ok {
			mapped = append(mapped, st)
		}
	}
	if len(mapped) == 0 {
		return func() {}
	}
	was := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(was)
		v := recover()
		if v == nil {
			return
		}
		for _, st := range mapped {
			if st.r.(Mapped).Faulted(v) {
				*err = &FormatError{File: st.name, Off: -1, Msg: "the file shrank while it was read (truncated by another program?)"}
				return
			}
		}
		panic(v)
	}
}

// Mapped is an [io.ReaderAt] of bytes in memory, a file mapped by mmap
// (package mapfile): the records of a Mapped stream are read in place,
// not copied, and the pages of what is not read (most of the stack a
// --call-graph dwarf sample carries) are not touched. A read of its
// bytes that faults (the file shrank under the mapping) ends the stream
// with a [*FormatError].
type Mapped interface {
	io.ReaderAt
	// Bytes returns the bytes ReadAt reads.
	Bytes() []byte
	// Faulted reports whether v, recovered from a panic under
	// [runtime/debug.SetPanicOnFault], is a fault in those bytes.
	Faulted(v any) bool
	// Release says that the bytes [off, off+n) are read: their pages
	// may leave memory, to be mapped again if read again.
	Release(off, n int64)
}

// releaseEvery is how many bytes of a Mapped stream are read between
// releases of what was read: what the process holds of the file.
const releaseEvery = 8 << 20

// A stream is where records are read from: the data section of the
// file, and the files of the other threads of perf record --threads.
type stream struct {
	r      io.ReaderAt
	off, n int64
	name   string
}

// AddThreadData adds the records of one of the per-thread files of a
// recording made with perf record --threads (a directory: data, which
// Open reads, and data.0, data.1, ...), r, of size bytes, named name:
// Records reads them after the file's own, one file after the other.
func (f *File) AddThreadData(r io.ReaderAt, size int64, name string) {
	f.streams = append(f.streams, stream{r: r, n: size, name: name})
}

// stream reads the records of fr, passing them to s.fn.
func (s *scanner) stream(fr *rawReader) error {
	s.name = fr.name
	for {
		typ, misc, off, body, err := fr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if typ == RecordCompressed || typ == RecordCompressed2 {
			// The rest of the stream is read with the compressed
			// records.
			return s.decompress(fr, typ, off, body)
		}
		if err := s.emit(typ, misc, off, body); err != nil {
			return err
		}
	}
}

// A rawReader reads the records of a stream, undecoded.
type rawReader struct {
	f          *File
	name       string
	ra         io.ReaderAt // what r reads
	r          *bufio.Reader
	mapped     Mapped // ra, if it is Mapped
	mem        []byte // its bytes, read in place instead of by r
	released   int64  // the offset up to which they are released
	off, end   int64
	rec        []byte // the record next returned, its header and body
	unfinished bool   // the stream may end inside a record
}

func (r *rawReader) errorf(off int64, format string, args ...any) error {
	return &FormatError{File: r.name, Off: off, Msg: fmt.Sprintf(format, args...)}
}

// peek returns the next n bytes of the stream, without reading past
// them, as io.ReadFull would read them: an error if there are fewer
// (io.ErrUnexpectedEOF if some).
func (r *rawReader) peek(n int) ([]byte, error) {
	if r.mem != nil {
		// next reads no further than the stream's end, which is inside
		// the mapping.
		return r.mem[r.off : r.off+int64(n) : r.off+int64(n)], nil
	}
	b, err := r.r.Peek(n)
	if len(b) == n {
		return b, nil
	}
	if err == io.EOF && len(b) > 0 {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// next returns the next record's type, misc field, offset and body (in
// r's buffer until the next call), or io.EOF at the end of the stream.
func (r *rawReader) next() (typ uint32, misc uint16, off int64, body []byte, err error) {
	bo := r.f.ByteOrder
	off = r.off
	if off >= r.end {
		if r.mapped != nil {
			r.mapped.Release(r.released, r.end-r.released)
			r.released = r.end
		}
		return 0, 0, off, nil, io.EOF
	}
	if r.end-off < 8 {
		if r.unfinished { // perf stopped while writing it
			return 0, 0, off, nil, io.EOF
		}
		return 0, 0, off, nil, r.errorf(off, "truncated record header")
	}
	// The record is read in the buffer's memory, not copied out of it
	// (a --call-graph dwarf sample is 8 KiB or more).
	head, err := r.peek(8)
	if err != nil {
		return 0, 0, off, nil, r.errorf(off, "reading a record: %v", err)
	}
	typ = bo.Uint32(head)
	misc = bo.Uint16(head[4:])
	size := int64(bo.Uint16(head[6:]))
	if size > r.end-off && size >= 8 && r.unfinished {
		return 0, 0, off, nil, io.EOF
	}
	if size < 8 || size > r.end-off {
		return 0, 0, off, nil, r.errorf(off, "record of type %d claims %d bytes, outside [8, %d]", typ, size, r.end-off)
	}
	rec, err := r.peek(int(size))
	if err != nil {
		return 0, 0, off, nil, r.errorf(off, "reading a record: %v", err)
	}
	r.rec, body = rec, rec[8:]
	if r.r != nil {
		r.r.Discard(int(size))
	}
	if r.mapped != nil && off-r.released >= releaseEvery {
		r.mapped.Release(r.released, off-r.released) // behind this record
		r.released = off
	}
	r.off += size
	// Data that follows the record (an AUX area's trace, tracing
	// metadata) is skipped.
	var skip uint64
	switch {
	case typ == recordAuxtrace && len(body) >= 8:
		skip = bo.Uint64(body)
	case typ == recordHeaderTracingData && len(body) >= 4:
		skip = uint64(bo.Uint32(body))
	}
	if skip > 0 {
		if skip > uint64(r.end-r.off) {
			if r.unfinished {
				return 0, 0, off, nil, io.EOF
			}
			return 0, 0, off, nil, r.errorf(off, "record of type %d is followed by %d bytes of data, past the end (%d bytes left)", typ, skip, r.end-r.off)
		}
		r.off += int64(skip)
		if r.r != nil {
			r.r.Reset(io.NewSectionReader(r.ra, r.off, r.end-r.off))
		}
	}
	return typ, misc, off, body, nil
}

// A scanner decodes records and passes them to fn.
type scanner struct {
	f       *File
	samples bool // SAMPLE records are passed too
	fn      func(*Record) bool
	rec     Record
	name    string // of the stream read
}

// errStop is returned by scanner.emit when fn asks to stop.
var errStop = errors.New("stopped")

// ignoreStop returns err, nil if it is errStop.
func ignoreStop(err error) error {
	if err == errStop {
		return nil
	}
	return err
}

// emit decodes the record (type typ, misc, at off, with body) and passes
// it to fn.
func (s *scanner) emit(typ uint32, misc uint16, off int64, body []byte) error {
	if typ == RecordSample && !s.samples {
		return nil
	}
	f := s.f
	rec := &s.rec
	*rec = Record{Type: typ, Misc: misc, Off: off, Callchain: rec.Callchain[:0], RegsUser: rec.RegsUser[:0], Group: rec.Group[:0]}
	ok := true
	switch typ {
	case RecordMMAP, RecordMMAP2:
		ok = f.mmap(rec, body)
	case RecordComm:
		ok = f.comm(rec, body)
	case RecordFork, RecordExit:
		if len(body) >= 16 {
			bo := f.ByteOrder
			rec.PID, rec.PPID, rec.TID, rec.PTID = bo.Uint32(body), bo.Uint32(body[4:]), bo.Uint32(body[8:]), bo.Uint32(body[12:])
		}
	case RecordSample:
		ok = f.sample(rec, body)
	case RecordLost, RecordLostSamples, RecordSwitch, RecordSwitchCPUWide:
		ok = f.sideBand(rec, body)
	}
	if !ok {
		return &FormatError{File: s.name, Off: off, Msg: fmt.Sprintf("record of type %d is shorter than its fields", typ)}
	}
	if typ != RecordSample {
		rec.Time = f.idTime(body)
	}
	if !s.fn(rec) {
		return errStop
	}
	return nil
}

// idTime returns the time in the sample_id trailer of a record other
// than SAMPLE, b, or 0 if it has none. The trailer holds, in this
// order, the fields of PERF_SAMPLE_TID, _TIME, _ID, _STREAM_ID, _CPU and
// _IDENTIFIER its event samples; the last, if there, names the event,
// else the first event's layout is every event's (as perf requires).
func (f *File) idTime(b []byte) uint64 {
	if len(f.Attrs) == 0 {
		return 0
	}
	bo := f.ByteOrder
	a := &f.Attrs[0]
	if a.SampleType&SampleIdentifier != 0 && len(b) >= 8 {
		if ea := f.byID[bo.Uint64(b[len(b)-8:])]; ea != nil {
			a = ea
		}
	}
	st := a.SampleType
	if !a.SampleIDAll || st&SampleTime == 0 {
		return 0
	}
	n, at := 0, 0
	for _, bit := range []uint64{SampleTID, SampleTime, SampleID, SampleStreamID, SampleCPU, SampleIdentifier} {
		if st&bit != 0 {
			n += 8
			if bit < SampleTime {
				at += 8
			}
		}
	}
	if len(b) < n {
		return 0
	}
	return bo.Uint64(b[len(b)-n+at:])
}

func (f *File) mmap(rec *Record, b []byte) bool {
	bo := f.ByteOrder
	if len(b) < 32 {
		return false
	}
	rec.PID, rec.TID = bo.Uint32(b), bo.Uint32(b[4:])
	rec.Addr, rec.Len, rec.Pgoff = bo.Uint64(b[8:]), bo.Uint64(b[16:]), bo.Uint64(b[24:])
	b = b[32:]
	if rec.Type == RecordMMAP2 {
		if len(b) < 32 {
			return false
		}
		if rec.Misc&(1<<14) != 0 { // PERF_RECORD_MISC_MMAP_BUILD_ID
			n := int(b[0])
			if n <= 20 {
				rec.BuildID = append([]byte(nil), b[4:4+n]...)
			}
		}
		rec.Prot = bo.Uint32(b[24:])
		b = b[32:]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	rec.Filename = string(b)
	return true
}

func (f *File) comm(rec *Record, b []byte) bool {
	if len(b) < 8 {
		return false
	}
	rec.PID, rec.TID = f.ByteOrder.Uint32(b), f.ByteOrder.Uint32(b[4:])
	b = b[8:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	rec.Comm = string(b)
	rec.Exec = rec.Misc&(1<<13) != 0 // PERF_RECORD_MISC_COMM_EXEC
	return true
}

// sample decodes a SAMPLE record per its event's sample_type.
func (f *File) sample(rec *Record, b []byte) bool {
	bo := f.ByteOrder
	attr := &f.Attrs[0]
	if len(f.Attrs) > 1 {
		// Which event: by the id, first with SAMPLE_IDENTIFIER, else at
		// the place SAMPLE_ID has in the layout (all events agree on it).
		st := f.Attrs[0].SampleType
		var id uint64
		switch {
		case st&SampleIdentifier != 0:
			if len(b) < 8 {
				return false
			}
			id = bo.Uint64(b)
		case st&SampleID != 0:
			p := 0
			for _, bit := range []uint64{SampleIP, SampleTID, SampleTime, SampleAddr} {
				if st&bit != 0 {
					p += 8
				}
			}
			if len(b) < p+8 {
				return false
			}
			id = bo.Uint64(b[p:])
		}
		if a := f.byID[id]; a != nil {
			attr = a
		}
	}
	rec.Attr = attr
	st := attr.SampleType
	u64 := func() (uint64, bool) {
		if len(b) < 8 {
			return 0, false
		}
		v := bo.Uint64(b)
		b = b[8:]
		return v, true
	}
	ok := true
	take := func(bit uint64, dst *uint64) {
		if ok && st&bit != 0 {
			var v uint64
			v, ok = u64()
			if dst != nil {
				*dst = v
			}
		}
	}
	take(SampleIdentifier, nil)
	take(SampleIP, &rec.IP)
	if ok && st&SampleTID != 0 {
		if len(b) < 8 {
			return false
		}
		rec.PID, rec.TID = bo.Uint32(b), bo.Uint32(b[4:])
		b = b[8:]
	}
	take(SampleTime, &rec.Time)
	take(SampleAddr, nil)
	take(SampleID, nil)
	take(SampleStreamID, nil)
	if ok && st&SampleCPU != 0 {
		if len(b) < 8 {
			return false
		}
		rec.CPU = bo.Uint32(b)
		b = b[8:]
	}
	// Without PERIOD in the samples (perf record -c: a fixed period),
	// each sample stands for the event's sample_period, as perf reads it.
	rec.Period = 1
	if !attr.Freq && attr.Period != 0 {
		rec.Period = attr.Period
	}
	take(SamplePeriod, &rec.Period)
	if !ok {
		return false
	}
	if st&SampleRead != 0 {
		// read_format: a value (or, with GROUP, nr first and a value
		// per event after the times), optional times, ids and lost
		// counts. A group's values and ids are kept.
		rf := attr.ReadFormat
		hasID, group := rf&(1<<2) != 0, rf&(1<<3) != 0
		per := 8
		if hasID {
			per += 8
		}
		if rf&(1<<4) != 0 { // LOST
			per += 8
		}
		extra := 0
		if rf&(1<<0) != 0 { // TOTAL_TIME_ENABLED
			extra += 8
		}
		if rf&(1<<1) != 0 { // TOTAL_TIME_RUNNING
			extra += 8
		}
		n := 1
		if group { // nr first
			if len(b) < 8 {
				return false
			}
			n = int(min(bo.Uint64(b), uint64(len(b))))
			b = b[8:]
		}
		skip := extra + n*per
		if skip > len(b) {
			return false
		}
		if group && hasID {
			for k := range n {
				v := b[extra+k*per:]
				rec.Group = append(rec.Group, ReadValue{Value: bo.Uint64(v), ID: bo.Uint64(v[8:])})
			}
		}
		b = b[skip:]
	}
	if st&SampleCallchain != 0 {
		if len(b) < 8 {
			return false
		}
		n := bo.Uint64(b)
		b = b[8:]
		if n > uint64(len(b)/8) {
			return false
		}
		for k := range int(n) {
			rec.Callchain = append(rec.Callchain, bo.Uint64(b[8*k:]))
		}
		b = b[8*n:]
	}
	if st&(SampleRegsUser|SampleStackUser) == 0 {
		return true
	}
	// What comes before the registers: RAW data, the branch stack.
	if st&SampleRaw != 0 {
		if len(b) < 4 {
			return false
		}
		n := uint64(bo.Uint32(b))
		if n > uint64(len(b)-4) {
			return false
		}
		b = b[4+n:]
	}
	if st&SampleBranch != 0 {
		if len(b) < 8 {
			return false
		}
		n := bo.Uint64(b)
		b = b[8:]
		if attr.BranchSampleTy&(1<<17) != 0 { // PERF_SAMPLE_BRANCH_HW_INDEX
			if len(b) < 8 {
				return false
			}
			b = b[8:]
		}
		if n > uint64(len(b)/24) {
			return false
		}
		b = b[24*n:]
	}
	if st&SampleRegsUser != 0 {
		if len(b) < 8 {
			return false
		}
		abi := bo.Uint64(b)
		b = b[8:]
		if abi != 0 { // PERF_SAMPLE_REGS_ABI_NONE: a kernel thread
			n := bits.OnesCount64(attr.RegsUser)
			if len(b) < 8*n {
				return false
			}
			for k := range n {
				rec.RegsUser = append(rec.RegsUser, bo.Uint64(b[8*k:]))
			}
			b = b[8*n:]
		}
	}
	if st&SampleStackUser != 0 {
		if len(b) < 8 {
			return false
		}
		n := bo.Uint64(b)
		b = b[8:]
		if n > uint64(len(b)) {
			return false
		}
		stack := b[:n]
		if n > 0 {
			if len(b)-int(n) < 8 {
				return false
			}
			dyn := bo.Uint64(b[n:]) // how much of it the kernel filled
			stack = stack[:min(dyn, n)]
		}
		rec.StackUser = stack
	}
	return true
}
