package driver

import (
	"path/filepath"
	"regexp"

	gdriver "github.com/google/pprof/driver"
	jprofile "github.com/jitpprof/pprof/profile"
)

// perfInjectedFile matches the names of the ELF files perf inject --jit
// makes of a jitdump's code, one per code load, which the recording it
// writes then maps: jitted-PID-N.so.
var perfInjectedFile = regexp.MustCompile(`^jitted-\d+-\d+\.so$`)

// isPerfInjected reports whether the recorded file name is such a file.
func isPerfInjected(file string) bool {
	return perfInjectedFile.MatchString(filepath.Base(file))
}

// injectedObjFile is a file perf inject made, opened for pprof (perhaps
// perf's copy of it in its build-ID cache: the name tells it, not the
// copy's): its code is named as the JIT stage names the same code read
// from the jitdump, so that a recording after perf inject --jit reads as
// the recording before it does.
type injectedObjFile struct {
	gdriver.ObjFile
	file string // the name the recording gives it
}

func (f injectedObjFile) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	frames, err := f.ObjFile.SourceLine(addr)
	return injectedFrames(frames), err
}

// Symbols returns the file's symbols (one: the code's) named by their
// functions, those whose function matches r or that hold addr, in the
// file of the recorded name (for Disasm, which substObj then reads as
// Open did).
func (f injectedObjFile) Symbols(r *regexp.Regexp, addr uint64) ([]*gdriver.Sym, error) {
	syms, err := f.ObjFile.Symbols(nil, 0) // all of them
	if err != nil {
		return nil, err
	}
	var out []*gdriver.Sym
	for _, s := range syms {
		holds := addr != 0 && s.Start <= addr && addr < s.End
		var names []string
		for _, name := range s.Name {
			if fn := jprofile.NameFrame(name).Func; holds || r == nil || r.MatchString(fn) {
				names = append(names, fn)
			}
		}
		if len(names) > 0 {
			c := *s
			c.Name, c.File = names, f.file
			out = append(out, &c)
		}
	}
	return out, nil
}

// injectedFrames returns frames, of code in a file perf inject made,
// named as the JIT stage names the jitdump's code
// (jprofile.JITDumpFrame): the symbol is the JIT's name of the code,
// which V8 and PHP give their own form ("JS:*fib /app.js:5:13",
// "TRACE-3$fib$13"); its function, and V8's script, replace it. A line
// the file's DWARF gives is kept (perf writes the jitdump's line table
// there), its file name not where V8's name has one (Node.js 20 writes
// garbage file names into its line tables).
func injectedFrames(frames []gdriver.Frame) []gdriver.Frame {
	out := frames
	for i, fr := range frames {
		nf := jprofile.NameFrame(fr.Func)
		if nf.Func == fr.Func {
			continue
		}
		if &out[0] == &frames[0] {
			out = append([]gdriver.Frame(nil), frames...)
		}
		fr.Func = nf.Func
		if nf.File != "" || fr.File == "" {
			fr.File = nf.File
		}
		if fr.Line == 0 {
			fr.Line = nf.Line
		}
		if nf.StartLine != 0 {
			fr.StartLine = nf.StartLine
		}
		out[i] = fr
	}
	return out
}

// injectedInsts names the instructions of a file perf inject made by
// their functions, as injectedFrames does.
func injectedInsts(insts []gdriver.Inst) {
	for i := range insts {
		insts[i].Function = jprofile.NameFrame(insts[i].Function).Func
	}
}
