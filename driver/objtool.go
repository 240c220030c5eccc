package driver

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/debuginfod"
	"github.com/jitpprof/pprof/internal/objtool"
)

// Values of -objtool and $PPROF_OBJTOOL.
const (
	objtoolInProcess = "inprocess"
	objtoolBinutils  = "binutils"
)

const objtoolUsage = `  Binaries (jitpprof):
    -objtool              How binaries are read for symbols, source lines and
                          disassembly: inprocess (default: jitpprof's own ELF and
                          DWARF reader) or binutils (upstream pprof's nm, objdump,
                          addr2line/llvm-symbolizer subprocesses). Also
                          $PPROF_OBJTOOL. As llvm-symbolizer does, inprocess
                          fetches missing debug files from the debuginfod
                          servers of $DEBUGINFOD_URLS, within the limits of
                          $DEBUGINFOD_TIMEOUT, $DEBUGINFOD_MAXTIME and
                          $DEBUGINFOD_MAXSIZE (see the environment variables).
    -asm_syntax           Assembler syntax of -disasm, -weblist and the web UI's
                          disassembly, with -objtool=inprocess: auto (default:
                          Go's for Go binaries, listed as go tool pprof lists
                          them, objdump's for the others), go (Go's, as go tool
                          objdump prints it), gnu (objdump's; Intel with
                          -intel_syntax) or intel (objdump -M intel).
    -max_debug_mb         The most the compressed debug sections of all the
                          binaries read in process may decompress to, in MiB
                          (default 1024): a few KiB of Zstandard can claim GiBs.
                          A binary past it is symbolized without its DWARF.`

// defineObjtoolFlags defines the object tool's limit flag on the run's
// flag set; applyObjtoolFlags hands its value to the tool once parsed.
func (r *run) defineObjtoolFlags() {
	r.maxDebugMB = r.flags.Int("max_debug_mb", objtool.DefaultMaxDecompressed>>20, "The most compressed debug sections may decompress to, in MiB")
}

// applyObjtoolFlags sets the object tool's limits from its flags, after
// they are parsed and before the tool reads anything.
func (r *run) applyObjtoolFlags() {
	if r.tool != nil && r.maxDebugMB != nil {
		r.tool.SetMaxDecompressed(int64(*r.maxDebugMB) << 20)
	}
}

// objtoolMode returns the object tool the run asks for: -objtool on the
// command line, else $PPROF_OBJTOOL, else inprocess. The command line is
// read before upstream's driver parses it, since the tool is one of the
// options handed to that driver; only a command line jitpprof parses
// itself (Options.Flagset nil, or made by NewFlagSet) can ask for it, an
// embedder's own FlagSet chooses with Options.Obj.
func objtoolMode(fs FlagSet, getenv func(string) string) (string, error) {
	mode := getenv("PPROF_OBJTOOL")
	if g, ok := fs.(*goFlags); ok {
		if v, ok := scanFlag(g.args, "objtool"); ok {
			mode = v
		}
	}
	switch mode {
	case "", objtoolInProcess:
		return objtoolInProcess, nil
	case objtoolBinutils:
		return objtoolBinutils, nil
	}
	return "", fmt.Errorf("-objtool=%q: unknown value, want %s or %s", mode, objtoolInProcess, objtoolBinutils)
}

// asmSyntax returns the assembler syntax -asm_syntax asks for, read as
// objtoolMode reads -objtool.
func asmSyntax(fs FlagSet) (objtool.Syntax, error) {
	g, ok := fs.(*goFlags)
	if !ok {
		return objtool.SyntaxAuto, nil
	}
	v, _ := scanFlag(g.args, "asm_syntax")
	s, err := objtool.ParseSyntax(v)
	if err != nil {
		return 0, fmt.Errorf("-asm_syntax: %w", err)
	}
	return s, nil
}

// scanFlag returns the value of the string flag name in args, read as
// package flag would read it: -name=v, --name=v, -name v or --name v,
// the last one winning, up to the first argument that is not a flag or
// "--".
func scanFlag(args []string, name string) (value string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if v, found := strings.CutPrefix(a, name+"="); found {
			value, ok = v, true
		} else if a == name && i+1 < len(args) {
			value, ok = args[i+1], true
			i++
		}
	}
	return value, ok
}

// newObjTool returns jitpprof's in-process object tool for a run, its
// disassembly in the given syntax, or nil when the caller supplies one or
// asks for upstream's binutils. As
// llvm-symbolizer does, it fetches debug files from the debuginfod
// servers that $DEBUGINFOD_URLS names, if any.
func newObjTool(o *Options, mode string, syntax objtool.Syntax, ui UI) *objtool.Tool {
	if o.Obj != nil || mode == objtoolBinutils {
		return nil
	}
	dc, err := debuginfod.FromEnv(o.Getenv)
	if err != nil {
		ui.PrintErr(err.Error() + "; no debug files are fetched")
	}
	return objtool.New(objtool.Options{
		Warn:       func(msg string) { ui.PrintErr(msg) },
		Debuginfod: dc,
		Syntax:     syntax,
	})
}

// warm has the object tool start indexing the binary file, which a
// profile still being read has samples in (see objtool.Tool.Warm), once
// per file, unless pprof will not symbolize locally.
func (r *run) warm(file string) {
	if r.tool == nil || !parseSymbolize(r.flags.stringFlag(flagSymbolize)).local {
		return
	}
	r.warmMu.Lock()
	defer r.warmMu.Unlock()
	if r.warmed == nil {
		r.warmed = map[string]bool{}
	}
	if !r.warmed[file] {
		r.warmed[file] = true
		r.tool.Warm(r.subst.of(file))
	}
}

// prefetch has the object tool start on the native binaries of p that
// pprof's symbolizer will ask about once the profile is fetched (see
// objtool.Tool.Prefetch): the index is built and the addresses looked up
// on every CPU while upstream finishes fetching. It does nothing unless
// pprof will symbolize locally.
func (r *run) prefetch(p *profile.Profile) {
	if r.tool == nil {
		return
	}
	mode := parseSymbolize(r.flags.stringFlag(flagSymbolize))
	if !mode.local {
		return
	}
	addrs := make(map[*profile.Mapping][]uint64)
	for _, l := range p.Location {
		if m := l.Mapping; m != nil && len(l.Line) == 0 && l.Address != 0 {
			addrs[m] = append(addrs[m], l.Address)
		}
	}
	for _, m := range p.Mapping {
		if symbolizes(m, mode) {
			r.tool.Prefetch(r.subst.of(m.File), m.Start, m.Limit, m.Offset, m.KernelRelocationSymbol, addrs[m])
		}
	}
}

// symbolizes reports whether pprof's symbolizer, in mode, looks up the
// addresses of m in its file (see upstream's localSymbolize).
func symbolizes(m *profile.Mapping, mode symbolizeMode) bool {
	return m.File != "" && !m.Unsymbolizable() && (mode.force || !(m.HasFunctions || m.HasFilenames || m.HasLineNumbers))
}

// warmMappings has the object tool start indexing the files of the
// mappings ms, which a quick scan found in a profile about to be parsed
// (see jprofile.ParseLimitHint), if pprof's symbolizer will ask about
// them: the index is built while the profile is parsed.
func (r *run) warmMappings(ms []*profile.Mapping) {
	if r.tool == nil {
		return
	}
	mode := parseSymbolize(r.flags.stringFlag(flagSymbolize))
	if !mode.local {
		return
	}
	for _, m := range ms {
		if symbolizes(m, mode) {
			r.warm(m.File)
		}
	}
}
