package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// This file writes perf.data as perf record does
// (tools/perf/Documentation/perf.data-file-format.txt): the 104-byte
// PERFILE2 header, each event's ids, the attribute section (each
// perf_event_attr followed by the file section of its ids), the data
// section of records, then the feature table and the feature sections.
// The header is written last, once the sizes are known, over a
// placeholder.

// Feature bits of the header's adds_features bitmap.
const (
	featBuildID   = 2
	featHostname  = 3
	featOSRelease = 4
	featVersion   = 5
	featArch      = 6
	featNrCPUs    = 7
	featCmdLine   = 11
	featEventDesc = 12
)

const (
	fileHeaderSize = 104
	// nameAlign is what perf pads strings and build-ID file names to.
	nameAlign = 64
)

// An event is one event of the recording as the file describes it: its
// attribute as given to perf_event_open, its name, and the id of each
// file descriptor opened for it.
type event struct {
	attr []byte // perf_event_attr, encoded
	name string
	ids  []uint64
}

// A fileWriter writes a perf.data file.
type fileWriter struct {
	f        *os.File
	w        *bufio.Writer
	events   []event
	dataOff  int64
	dataSize int64
}

// newFileWriter writes the parts before the data section of the file f
// (its header a placeholder) for events.
func newFileWriter(f *os.File, events []event) (*fileWriter, error) {
	fw := &fileWriter{f: f, events: events}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	fw.w = bufio.NewWriterSize(f, 1<<20)
	fw.w.Write(make([]byte, fileHeaderSize))
	off := int64(fileHeaderSize)
	idOffs := make([]int64, len(events))
	for i, e := range events {
		idOffs[i] = off
		for _, id := range e.ids {
			fw.w.Write(binary.NativeEndian.AppendUint64(nil, id))
		}
		off += int64(8 * len(e.ids))
	}
	for i, e := range events {
		var b []byte
		b = append(b, e.attr...)
		b = binary.NativeEndian.AppendUint64(b, uint64(idOffs[i]))
		b = binary.NativeEndian.AppendUint64(b, uint64(8*len(e.ids)))
		fw.w.Write(b)
		off += int64(len(b))
	}
	fw.dataOff = off
	return fw, fw.w.Flush()
}

// Write appends records to the data section.
func (fw *fileWriter) Write(b []byte) (int, error) {
	n, err := fw.w.Write(b)
	fw.dataSize += int64(n)
	return n, err
}

// A buildID is a file's build ID, for the build-ID feature.
type buildID struct {
	file   string
	id     []byte
	kernel bool // the kernel's or a module's
}

// features are what the feature sections say.
type features struct {
	hostname, osRelease, version, arch string
	cpusOnline, cpusAvail              uint32
	cmdLine                            []string
	buildIDs                           []buildID
}

// finish writes the feature sections after the data and then the header.
func (fw *fileWriter) finish(ft features) error {
	if err := fw.w.Flush(); err != nil {
		return err
	}
	type section struct {
		bit  int
		data []byte
	}
	var secs []section
	add := func(bit int, data []byte) { secs = append(secs, section{bit, data}) }
	if len(ft.buildIDs) > 0 {
		add(featBuildID, buildIDSection(ft.buildIDs))
	}
	add(featHostname, perfString(nil, ft.hostname))
	add(featOSRelease, perfString(nil, ft.osRelease))
	add(featVersion, perfString(nil, ft.version))
	add(featArch, perfString(nil, ft.arch))
	nr := binary.NativeEndian.AppendUint32(nil, ft.cpusAvail)
	add(featNrCPUs, binary.NativeEndian.AppendUint32(nr, ft.cpusOnline))
	cmd := binary.NativeEndian.AppendUint32(nil, uint32(len(ft.cmdLine)))
	for _, s := range ft.cmdLine {
		cmd = perfString(cmd, s)
	}
	add(featCmdLine, cmd)
	add(featEventDesc, fw.eventDesc())
	slices.SortFunc(secs, func(a, b section) int { return a.bit - b.bit })

	tableOff := fw.dataOff + fw.dataSize
	off := tableOff + int64(16*len(secs))
	var table, body []byte
	var bitmap [4]uint64
	for _, s := range secs {
		bitmap[s.bit/64] |= 1 << (s.bit % 64)
		table = binary.NativeEndian.AppendUint64(table, uint64(off))
		table = binary.NativeEndian.AppendUint64(table, uint64(len(s.data)))
		body = append(body, s.data...)
		off += int64(len(s.data))
	}
	if _, err := fw.f.WriteAt(append(table, body...), tableOff); err != nil {
		return err
	}
	h := []byte("PERFILE2")
	h = binary.NativeEndian.AppendUint64(h, fileHeaderSize)
	attrSize := 0
	if len(fw.events) > 0 {
		attrSize = len(fw.events[0].attr) + 16
	}
	h = binary.NativeEndian.AppendUint64(h, uint64(attrSize))
	idsSize := int64(0)
	for _, e := range fw.events {
		idsSize += int64(8 * len(e.ids))
	}
	h = binary.NativeEndian.AppendUint64(h, uint64(fileHeaderSize+idsSize)) // attrs
	h = binary.NativeEndian.AppendUint64(h, uint64(len(fw.events)*attrSize))
	h = binary.NativeEndian.AppendUint64(h, uint64(fw.dataOff))
	h = binary.NativeEndian.AppendUint64(h, uint64(fw.dataSize))
	h = binary.NativeEndian.AppendUint64(h, 0) // event types: unused
	h = binary.NativeEndian.AppendUint64(h, 0)
	for _, w := range bitmap {
		h = binary.NativeEndian.AppendUint64(h, w)
	}
	if len(h) != fileHeaderSize {
		panic(fmt.Sprintf("perf.data header of %d bytes", len(h)))
	}
	_, err := fw.f.WriteAt(h, 0)
	return err
}

// eventDesc returns the event-description feature: the number of events
// and the attribute's size, then per event its attribute, the number of
// its ids, its name and its ids.
func (fw *fileWriter) eventDesc() []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(len(fw.events)))
	size := 0
	if len(fw.events) > 0 {
		size = len(fw.events[0].attr)
	}
	b = binary.NativeEndian.AppendUint32(b, uint32(size))
	for _, e := range fw.events {
		b = append(b, e.attr...)
		b = binary.NativeEndian.AppendUint32(b, uint32(len(e.ids)))
		b = perfString(b, e.name)
		for _, id := range e.ids {
			b = binary.NativeEndian.AppendUint64(b, id)
		}
	}
	return b
}

// perfString appends perf's string (perf_header_string): a 32-bit length,
// then the string, NUL-terminated and padded with NULs to nameAlign.
func perfString(b []byte, s string) []byte {
	n := (len(s) + 1 + nameAlign - 1) / nameAlign * nameAlign
	b = binary.NativeEndian.AppendUint32(b, uint32(n))
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// Build-ID records' misc bits.
const (
	miscKernel      = 1
	miscUser        = 2
	miscBuildIDSize = 1 << 15 // the id's size in the byte after its 20
)

// buildIDSection returns the build-ID feature: a build_id_event per
// file (a record header, the pid, 24 bytes holding the id and its size,
// the file name padded to nameAlign), pid -1 for all, as perf record
// writes them for the host.
func buildIDSection(ids []buildID) []byte {
	var b []byte
	for _, id := range ids {
		if len(id.id) > 20 {
			continue
		}
		name := (len(id.file) + 1 + nameAlign - 1) / nameAlign * nameAlign
		misc := uint16(miscUser)
		if id.kernel {
			misc = miscKernel
		}
		b = binary.NativeEndian.AppendUint32(b, recordHeaderBuildID)
		b = binary.NativeEndian.AppendUint16(b, misc|miscBuildIDSize)
		b = binary.NativeEndian.AppendUint16(b, uint16(36+name))
		b = binary.NativeEndian.AppendUint32(b, ^uint32(0)) // pid -1
		var raw [24]byte
		copy(raw[:], id.id)
		raw[20] = byte(len(id.id))
		b = append(b, raw[:]...)
		b = append(b, id.file...)
		b = append(b, make([]byte, name-len(id.file))...)
	}
	return b
}

// recordHeaderBuildID is PERF_RECORD_HEADER_BUILD_ID, the type of the
// build-ID feature's entries.
const recordHeaderBuildID = 67

// cString returns b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
