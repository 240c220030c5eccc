package driver

import (
	"fmt"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/symbolizer"
)

// openInProcess opens a JIT object with jitpprof's in-process symbolizer,
// and says once if the object has no DWARF, so that only function names
// from its symbol table can be given.
func (j *jitStage) openInProcess(path string) (symbolizer.Object, error) {
	var s *jitsym.Symbolizer
	var err error
	if j.tool != nil {
		s, err = j.tool.Index(path) // the object tool's, shared with the code views
	} else {
		s, err = jitsym.Open(path)
	}
	if err != nil {
		return nil, err
	}
	if !s.HasDWARF() {
		j.warnOnce(fmt.Sprintf("JIT objects: %s: no DWARF debug information; "+
			"JIT frames get function names from its symbol table, without file:line", path))
	}
	return inProcessObject{s: s, owned: j.tool == nil}, nil
}

// inProcessObject adapts a jitsym.Symbolizer to symbolizer.Object.
type inProcessObject struct {
	s     *jitsym.Symbolizer
	owned bool // closed with the object; else the object tool closes it
}

func (o inProcessObject) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	frames, err := o.s.SourceLine(addr)
	if err != nil || len(frames) == 0 {
		return nil, err
	}
	out := make([]gdriver.Frame, len(frames))
	for i, f := range frames {
		out[i] = gdriver.Frame(f)
	}
	return out, nil
}

func (o inProcessObject) Close() error {
	if !o.owned {
		return nil
	}
	return o.s.Close()
}
