// Package perftest writes synthetic perf.data recordings for tests, as
// perf record lays them out (tools/perf/Documentation/
// perf.data-file-format.txt): the header, one cpu-clock event sampling
// IP, TID, TIME, PERIOD and CALLCHAIN with sample_id_all (so that every
// side record carries its pid, tid and time), the data section, and a
// hostname feature. Records are little-endian; COMPRESSED records are
// made as perf record -z makes them.
package perftest

import (
	"bytes"
	"encoding/binary"

	"github.com/klauspost/compress/zstd"
)

var le = binary.LittleEndian

// Record types and sample type bits, as perf_event.h numbers them.
const (
	TypeMMAP        = 1
	TypeComm        = 3
	TypeFork        = 7
	TypeSample      = 9
	TypeMMAP2       = 10
	TypeCompressed2 = 83

	sampleType = 1<<0 | 1<<1 | 1<<2 | 1<<5 | 1<<8 // IP, TID, TIME, CALLCHAIN, PERIOD
)

// UserMarker is PERF_CONTEXT_USER, which starts the user part of a
// callchain.
const UserMarker = ^uint64(0) - 512 + 1

// A Recording is a perf.data file being made.
type Recording struct {
	// Records are the data section's records, whole (header included).
	Records [][]byte
	// EventName, if not "", is the event's name in the event
	// descriptions feature (HEADER_EVENT_DESC).
	EventName string
}

// Add appends records to the data section.
func (r *Recording) Add(records ...[]byte) { r.Records = append(r.Records, records...) }

// Record returns a record of type typ with misc and body (padded to 8
// bytes).
func Record(typ uint32, misc uint16, body []byte) []byte {
	body = pad8(body)
	out := le.AppendUint32(nil, typ)
	out = le.AppendUint16(out, misc)
	out = le.AppendUint16(out, uint16(8+len(body)))
	return append(out, body...)
}

func pad8(b []byte) []byte {
	if n := len(b) % 8; n != 0 {
		b = append(b, make([]byte, 8-n)...)
	}
	return b
}

// trailer is the sample_id of a side record: its pid, tid and time.
func trailer(b []byte, pid, tid uint32, time uint64) []byte {
	b = le.AppendUint32(b, pid)
	b = le.AppendUint32(b, tid)
	return le.AppendUint64(b, time)
}

// cstring returns s NUL-terminated and padded to 8 bytes.
func cstring(s string) []byte { return pad8(append([]byte(s), 0)) }

// MMAP2 returns an executable MMAP2 record of file at [addr, addr+n) in
// process pid at time t.
func MMAP2(pid uint32, t, addr, n, pgoff uint64, file string) []byte {
	b := le.AppendUint32(nil, pid)
	b = le.AppendUint32(b, pid)
	b = le.AppendUint64(b, addr)
	b = le.AppendUint64(b, n)
	b = le.AppendUint64(b, pgoff)
	b = append(b, make([]byte, 24)...) // maj, min, ino, ino_generation
	b = le.AppendUint32(b, 5)          // prot: PROT_READ|PROT_EXEC
	b = le.AppendUint32(b, 2)          // flags: MAP_PRIVATE
	b = append(b, cstring(file)...)
	return Record(TypeMMAP2, 2, trailer(b, pid, pid, t))
}

// Comm returns a COMM record: thread tid of process pid is named comm
// from time t (by exec, if exec).
func Comm(pid, tid uint32, t uint64, comm string, exec bool) []byte {
	b := le.AppendUint32(nil, pid)
	b = le.AppendUint32(b, tid)
	b = append(b, cstring(comm)...)
	misc := uint16(2)
	if exec {
		misc |= 1 << 13
	}
	return Record(TypeComm, misc, trailer(b, pid, tid, t))
}

// Fork returns a FORK record: thread tid of process pid was made from
// thread ptid of process ppid at time t.
func Fork(pid, ppid, tid, ptid uint32, t uint64) []byte {
	b := le.AppendUint32(nil, pid)
	b = le.AppendUint32(b, ppid)
	b = le.AppendUint32(b, tid)
	b = le.AppendUint32(b, ptid)
	b = le.AppendUint64(b, t)
	return Record(TypeFork, 0, trailer(b, pid, tid, t))
}

// Sample returns a SAMPLE record of thread tid of process pid at time t,
// of period, with the callchain chain (leaf first; a user context marker
// is put first).
func Sample(pid, tid uint32, t, period uint64, chain ...uint64) []byte {
	b := le.AppendUint64(nil, chain[0])
	b = le.AppendUint32(b, pid)
	b = le.AppendUint32(b, tid)
	b = le.AppendUint64(b, t)
	b = le.AppendUint64(b, period)
	b = le.AppendUint64(b, uint64(len(chain)+1))
	b = le.AppendUint64(b, UserMarker)
	for _, ip := range chain {
		b = le.AppendUint64(b, ip)
	}
	return Record(TypeSample, 2, b)
}

// Compress returns records as perf record -z writes them: one Zstandard
// stream, encoded at level, flushed once at the end, cut into
// COMPRESSED2 records of at most 60 KiB of it each.
func Compress(records [][]byte, level zstd.EncoderLevel) [][]byte {
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err)
	}
	for _, r := range records {
		enc.Write(r)
	}
	enc.Flush()
	return CompressedRecords(z.Bytes())
}

// CompressedRecords cuts the Zstandard stream z into COMPRESSED2 records.
func CompressedRecords(z []byte) [][]byte {
	var out [][]byte
	for p := z; len(p) > 0; {
		n := min(len(p), 60<<10)
		out = append(out, Record(TypeCompressed2, 0, append(le.AppendUint64(nil, uint64(n)), p[:n]...)))
		p = p[n:]
	}
	return out
}

// Attribute layout: perf_event_attr of 120 bytes, then its ids' file
// section.
const (
	headerSize = 104
	attrSize   = 120
	featHost   = 3
	featEvents = 12
)

// Bytes returns the perf.data file.
func (r *Recording) Bytes() []byte {
	var data bytes.Buffer
	for _, rec := range r.Records {
		data.Write(rec)
	}
	attrsOff := int64(headerSize)
	idsOff := attrsOff + attrSize + 16
	dataOff := idsOff + 8
	featOff := dataOff + int64(data.Len())
	out := []byte("PERFILE2")
	for _, v := range []int64{headerSize, attrSize + 16, attrsOff, attrSize + 16, dataOff, int64(data.Len()), 0, 0} {
		out = le.AppendUint64(out, uint64(v))
	}
	features := uint64(1) << featHost
	if r.EventName != "" {
		features |= 1 << featEvents
	}
	out = le.AppendUint64(out, features)
	out = append(out, make([]byte, 24)...)
	attr := make([]byte, attrSize)
	le.PutUint32(attr, 1) // PERF_TYPE_SOFTWARE; config 0: cpu-clock
	le.PutUint32(attr[4:], attrSize)
	le.PutUint64(attr[16:], 1000000)     // sample_period
	le.PutUint64(attr[24:], sampleType)  // sample_type
	le.PutUint64(attr[40:], 1<<18|1<<25) // sample_id_all, use_clockid
	le.PutUint32(attr[92:], 1)           // clockid: CLOCK_MONOTONIC
	out = append(out, attr...)
	out = le.AppendUint64(out, uint64(idsOff))
	out = le.AppendUint64(out, 8)
	out = le.AppendUint64(out, 1) // the event's one id
	out = append(out, data.Bytes()...)
	host := perfString("localhost")
	var events []byte
	if r.EventName != "" {
		events = le.AppendUint32(nil, 1)           // one event
		events = le.AppendUint32(events, attrSize) // of attr_size bytes
		events = append(events, attr...)
		events = le.AppendUint32(events, 1) // one id
		events = append(events, perfString(r.EventName)...)
		events = le.AppendUint64(events, 1)
	}
	n := int64(1)
	if events != nil {
		n = 2
	}
	at := featOff + 16*n
	out = le.AppendUint64(out, uint64(at))
	out = le.AppendUint64(out, uint64(len(host)))
	if events != nil {
		out = le.AppendUint64(out, uint64(at+int64(len(host))))
		out = le.AppendUint64(out, uint64(len(events)))
	}
	out = append(out, host...)
	return append(out, events...)
}

// perfString is a perf_header_string: a u32 length, then that many
// bytes, the string NUL-padded to 8 bytes.
func perfString(s string) []byte {
	b := cstring(s)
	return append(le.AppendUint32(nil, uint32(len(b))), b...)
}
