package symbolizer

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/srcfile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// fifoFrames names a FIFO as the source file of every frame, as a
// jitdump's line table may.
type fifoFrames struct{ fifo string }

func (f fifoFrames) Frames(addr uint64) []jprofile.Frame {
	return []jprofile.Frame{{Func: "js_work", File: f.fifo, Line: 3, StartLine: 1}}
}

// TestSymbolizeSourceFIFO: a FIFO named as a source file is handed on
// under a name pprof's source views do not find, with one warning naming
// the object and the file, however many locations and workers name it.
func TestSymbolizeSourceFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "app.js")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{}
	jm := addRandomMapping(p, "/jit/jit-1.dump", fifoFrames{fifo}, 4*minSplit, 1, 1<<30)
	errs := Symbolize(p, []Mapping{jm}, nil, nil)
	var w *jprofile.ObjectWarning
	if len(errs) != 1 || !errors.As(errs[0], &w) || w.File != "/jit/jit-1.dump" || !strings.Contains(w.Msg, "source file "+fifo+": "+fifo+" is a FIFO") {
		t.Fatalf("errors %v, want one warning naming the object and the FIFO", errs)
	}
	for _, fn := range p.Function {
		if fn.Filename != fifo+srcfile.Suffix {
			t.Fatalf("function %s in %q, want %q", fn.Name, fn.Filename, fifo+srcfile.Suffix)
		}
	}
}
