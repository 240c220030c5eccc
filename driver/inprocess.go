package driver

import (
	"fmt"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/objtool"
	"github.com/jitpprof/pprof/internal/symbolizer"
	jprofile "github.com/jitpprof/pprof/profile"
)

// openInProcess opens a JIT object for jitpprof's in-process symbolizer:
// an LLVM dump through the object tool's index (or jitsym when there is
// no object tool), saying once if it has no DWARF, so that only function
// names from its symbol table can be given; a perf map or jitdump from
// what the JIT stage read of it.
func (j *jitStage) openInProcess(obj *jprofile.Object) (symbolizer.Object, error) {
	if obj.Kind != jprofile.LLVMDump {
		r, err := jprofile.SourceOf(obj.Kind).Open(obj)
		if err != nil {
			return nil, err
		}
		return sourceObject{r: r, tool: j.tool}, nil
	}
	var s *jitsym.Symbolizer
	var err error
	if j.tool != nil {
		s, err = j.tool.Index(obj.Path) // the object tool's, shared with the code views
	} else {
		s, err = jitsym.Open(obj.Path)
		if err == nil {
			for _, w := range s.Warnings() { // the object tool says these itself
				j.warnOnce("JIT objects: " + w)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if !s.HasDWARF() {
		j.warnOnce(fmt.Sprintf("JIT objects: %s: no DWARF debug information; "+
			"JIT frames get function names from its symbol table, without file:line", obj.Path))
	}
	return inProcessObject{s: s, owned: j.tool == nil, tool: j.tool}, nil
}

// sourceObject adapts a perf map or jitdump object to symbolizer.Object.
// Its frames' files are named by the object tool, if there is one (see
// objtool.Tool.SourceName): a jitdump's line table may name a FIFO.
type sourceObject struct {
	r    jprofile.FrameSource
	tool *objtool.Tool
}

func (o sourceObject) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	frames := o.r.Frames(addr)
	if len(frames) == 0 {
		return nil, nil
	}
	out := make([]gdriver.Frame, len(frames))
	for i, f := range frames {
		out[i] = gdriver.Frame{Func: f.Func, File: o.tool.SourceName(f.File), Line: f.Line, Column: f.Column, StartLine: f.StartLine}
	}
	return out, nil
}

func (o sourceObject) Close() error { return o.r.Close() }

// inProcessObject adapts a jitsym.Symbolizer to symbolizer.Object, its
// frames' files named by the object tool, if there is one.
type inProcessObject struct {
	s     *jitsym.Symbolizer
	owned bool          // closed with the object; else the object tool closes it
	tool  *objtool.Tool // nil without one
}

func (o inProcessObject) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	// The frames are built in buf (on the stack, for all but the deepest
	// inline chains) and copied once, into the slice returned.
	var buf [8]jitsym.Frame
	frames := o.s.AppendFrames(buf[:0], addr)
	if len(frames) == 0 {
		return nil, nil
	}
	out := make([]gdriver.Frame, len(frames))
	for i, f := range frames {
		out[i] = gdriver.Frame(f)
		out[i].File = o.tool.SourceName(f.File)
	}
	return out, nil
}

func (o inProcessObject) Close() error {
	if !o.owned {
		return nil
	}
	return o.s.Close()
}
