package profile

import (
	"errors"
	"os"

	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/regfile"
)

// A JITDumpReplay names the JIT code a recording with sample times
// (perf.data) hit by the time of each sample: code that a runtime moved
// (CODE_MOVE), or whose memory it reused for other code (a CODE_LOAD over
// earlier code), ran at addresses that hold something else in the
// jitdump's final state, the only state the JIT stage knows. It reads
// the jitdump files with the same reader as the JIT stage and names code
// with the same JITDumpFrame; it answers only for code that is not there
// at the end, and leaves the rest to the JIT stage and its ranking of
// JIT sources.
type JITDumpReplay struct {
	dumps map[uint32]*replayDump // by the pid in the dump's header
	ids   map[*jitdump.Code]uint64
}

// replayDump is one jitdump file, open for reading line tables.
type replayDump struct {
	f     *os.File
	d     *jitdump.Dump
	lines map[*jitdump.Code][]jitdump.Line
}

// OpenJITDumpReplay reads the jitdump files at paths. The files that
// cannot be read are left out, each with an error naming it (the JIT
// stage, which reads them too, reports them to the user).
func OpenJITDumpReplay(paths []string) (*JITDumpReplay, []error) {
	r := &JITDumpReplay{dumps: map[uint32]*replayDump{}, ids: map[*jitdump.Code]uint64{}}
	var errs []error
	for _, path := range paths {
		f, err := regfile.Open(path)
		if err != nil {
			errs = append(errs, &ObjectError{File: path, Err: err})
			continue
		}
		st, err := f.Stat()
		var d *jitdump.Dump
		if err == nil {
			d, err = jitdump.Read(f, st.Size(), path)
		}
		if err != nil {
			f.Close()
			errs = append(errs, &ObjectError{File: path, Err: err})
			continue
		}
		if old := r.dumps[d.PID]; old != nil {
			old.f.Close() // a pid reused: the later file
		}
		r.dumps[d.PID] = &replayDump{f: f, d: d, lines: map[*jitdump.Code][]jitdump.Line{}}
	}
	return r, errs
}

// Replaced reports whether any dump has code that was moved or loaded
// over other code.
func (r *JITDumpReplay) Replaced() bool {
	for _, rd := range r.dumps {
		if rd.d.Replaced() {
			return true
		}
	}
	return false
}

// Code returns the frame of the code that held addr in process pid at
// time t, if that code is not the code there at the end (see
// jitdump.Dump.At), and a key telling it apart from other code.
func (r *JITDumpReplay) Code(pid uint32, addr, t uint64) (fn, file string, line, startLine int64, key uint64, ok bool) {
	rd := r.dumps[pid]
	if rd == nil {
		return "", "", 0, 0, 0, false
	}
	c, final := rd.d.At(addr, t)
	if c == nil || rd.d.Final(c, addr) {
		return "", "", 0, 0, 0, false
	}
	lines, read := rd.lines[c]
	if !read {
		lines, _ = rd.d.Lines(rd.f, c) // a bad line table just means no lines
		rd.lines[c] = lines
	}
	key = r.ids[c]
	if key == 0 {
		key = uint64(len(r.ids) + 1)
		r.ids[c] = key
	}
	f := JITDumpFrame(c, lines, final)
	return f.Func, f.File, int64(f.Line), int64(f.StartLine), key, true
}

// Close closes the files.
func (r *JITDumpReplay) Close() error {
	var errs []error
	for _, rd := range r.dumps {
		errs = append(errs, rd.f.Close())
	}
	return errors.Join(errs...)
}
