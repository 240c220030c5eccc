package perfdata

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// The records of perf record -z are one Zstandard stream, which perf
// compresses a ring buffer's worth at a time and flushes, never ending
// the frame, and cuts into COMPRESSED records of at most 64 KiB; a
// decompressed record can span two of them. The records perf writes
// itself (the processes it found at the start, FINISHED_ROUND) stay
// uncompressed between them. (tools/perf/util/zstd.c,
// perf_session__process_compressed_event.)

// maxWindow bounds the Zstandard window a recording may ask for: perf
// compresses with level 1 to 22, whose windows are at most 128 MiB
// (level 22's), 512 KiB at its default level 1.
const maxWindow = 128 << 20

// expansion bounds what the compressed records may decompress to, as a
// multiple of the size of the file up to their end (plus 64 MiB): perf's
// records compress about 10 times with -g, and up to hundreds of times
// with --call-graph dwarf, whose stack copies repeat (184 times for a
// recording of testdata/perf/work.c's shallow stacks, 14 times for
// bench/perfdata.sh's deep100z; Zstandard's own bound is about 32,000); a
// stream that claims more is hostile and is cut there rather than
// decoded for minutes.
const expansion = 4096

// decompress reads the rest of the stream fr, the Zstandard stream of
// its compressed records the first of which, of type typ at off, has
// body, and the uncompressed records between them, and passes their
// records to s.fn.
func (s *scanner) decompress(fr *rawReader, typ uint32, off int64, body []byte) error {
	f := s.f
	in := &pieces{s: s, fr: fr}
	if err := in.set(typ, off, body); err != nil {
		return err
	}
	// One decoder goroutine, decoding as its output is read: the pieces
	// are read, and the uncompressed records between them passed on, in
	// step with the records decompressed.
	dec, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return fr.errorf(off, "compressed records: %v", err)
	}
	defer dec.Close()
	limit := 64<<20 + expansion*fr.end
	buf := make([]byte, maxRecord)
	var pos int64 // in the decompressed stream
	for {
		n, err := io.ReadFull(dec, buf[:8])
		if in.err != nil { // fn asked to stop, or an uncompressed record is bad
			return ignoreStop(in.err)
		}
		if err != nil && in.done && (fr.unfinished || n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF)) {
			// perf never ends its frame: the stream ends with the
			// file, and inside a record or a block if perf was
			// stopped while writing.
			return nil
		}
		if err != nil {
			return in.errorf(pos, "%v", streamErr(err))
		}
		typ := f.ByteOrder.Uint32(buf)
		misc := f.ByteOrder.Uint16(buf[4:])
		size := int64(f.ByteOrder.Uint16(buf[6:]))
		if size < 8 {
			return in.errorf(pos, "record of type %d claims %d bytes", typ, size)
		}
		if pos+size > limit {
			return in.errorf(pos, "decompresses to more than %d bytes, %d times the file's size", limit, expansion)
		}
		if err := f.allow(fr.name, pos+size); err != nil {
			return in.errorf(pos, "%v", err)
		}
		if _, err := io.ReadFull(dec, buf[8:size]); err != nil {
			if in.err != nil {
				return ignoreStop(in.err)
			}
			if in.done && fr.unfinished {
				return nil
			}
			return in.errorf(pos, "record of type %d, %d bytes: %v", typ, size, streamErr(err))
		}
		if typ == RecordCompressed || typ == RecordCompressed2 {
			return in.errorf(pos, "compressed record inside the compressed stream")
		}
		if err := s.emit(typ, misc, in.off, buf[8:size]); err != nil {
			return ignoreStop(err)
		}
		pos += size
	}
}

// streamErr says what err, from the decoder, means for the stream.
func streamErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("the compressed records end inside a record")
	}
	return fmt.Errorf("cannot decompress: %w", err)
}

// pieces is the Zstandard stream of the compressed records: it reads the
// stream of records on as the decoder asks for more, passing the
// uncompressed records it meets to the scanner.
type pieces struct {
	s    *scanner
	fr   *rawReader
	cur  []byte // what is left of the piece being read (in fr's buffer)
	off  int64  // the offset of the compressed record being read
	done bool   // the stream of records is read to its end
	err  error  // from an uncompressed record, or errStop
}

// set makes the body of the compressed record of type typ at off the
// piece to read.
func (p *pieces) set(typ uint32, off int64, body []byte) error {
	p.off = off
	if typ == RecordCompressed2 {
		if len(body) < 8 {
			return p.fr.errorf(off, "compressed record of %d bytes", 8+len(body))
		}
		n := p.s.f.ByteOrder.Uint64(body)
		if n > uint64(len(body)-8) {
			return p.fr.errorf(off, "compressed record of %d bytes claims %d bytes of data", 8+len(body), n)
		}
		body = body[8 : 8+n]
	}
	p.cur = body
	return nil
}

func (p *pieces) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		typ, misc, off, body, err := p.fr.next()
		if err == io.EOF {
			p.done = true
			return 0, io.EOF
		}
		if err == nil {
			if typ == RecordCompressed || typ == RecordCompressed2 {
				err = p.set(typ, off, body)
			} else {
				err = p.s.emit(typ, misc, off, body)
			}
		}
		if err != nil {
			p.err = err
			return 0, err
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// errorf returns the error for the record at pos in the decompressed
// stream.
func (p *pieces) errorf(pos int64, format string, args ...any) error {
	return p.fr.errorf(p.off, "in the records compressed (perf record -z), at byte %d of the stream: %s", pos, fmt.Sprintf(format, args...))
}
