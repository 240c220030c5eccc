// Package driver runs jitpprof: upstream pprof's driver with an
// extended-mapping stage that symbolizes JIT-compiled code.
//
// It is a drop-in replacement for github.com/google/pprof/driver: the
// plugin interfaces are upstream's own (the names here are aliases), and
// Options has the same fields plus jitpprof's. PProf hands everything to
// upstream's driver and plugs in only what it changes:
//
//   - Fetch: every profile, from a file, an http(s) URL or the caller's
//     own Fetcher, goes through the stage of package
//     github.com/jitpprof/pprof/profile: legacy profiles get mappings
//     rebuilt from their memory map without upstream's unsafe merge, and
//     addresses in JIT code are attached to one mapping per JIT object,
//     which is then symbolized in process (see -jit_symbolizer).
//   - Flagset: adds jitpprof's flags (-jit_dir, -jit_symbolizer,
//     -jit_pid, -jit_any_owner, -objtool, -asm_syntax, -max_profile_mb,
//     -max_perf_mb, -max_debug_mb, -folded and -collapsed, -flamegraph,
//     -flamegraph_title, -record and its flags) and reads upstream's
//     -symbolize.
//   - Obj: jitpprof's in-process object tool (package
//     internal/objtool), unless the caller gives one or -objtool=binutils
//     asks for upstream's.
//   - HTTPTransport: the same TLS flags as upstream's, shared by the
//     fetcher and upstream's symbolz client.
//
// Upstream's symbolizer, reports and web UI are used unchanged: a JIT
// mapping that already carries functions and lines is left alone by
// them.
package driver

import (
	"flag"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/objtool"
	"github.com/jitpprof/pprof/internal/transport"
	jprofile "github.com/jitpprof/pprof/profile"
)

// The plugin interfaces and types, the same as upstream pprof's.
type (
	Writer         = gdriver.Writer
	FlagSet        = gdriver.FlagSet
	Fetcher        = gdriver.Fetcher
	Symbolizer     = gdriver.Symbolizer
	MappingSources = gdriver.MappingSources
	ObjTool        = gdriver.ObjTool
	ObjFile        = gdriver.ObjFile
	Inst           = gdriver.Inst
	Frame          = gdriver.Frame
	Sym            = gdriver.Sym
	UI             = gdriver.UI
	HTTPServerArgs = gdriver.HTTPServerArgs
)

// Options groups pprof's optional plugins and jitpprof's settings. A nil
// plugin gets upstream pprof's default, except as noted.
type Options struct {
	// Writer opens the files reports are written to (-output).
	Writer Writer
	// Flagset defines and parses the command line. Nil means the process
	// command line, os.Args[1:], parsed as upstream pprof does (see
	// NewFlagSet). jitpprof defines its own flags on it too.
	Flagset FlagSet
	// Fetch, if not nil, is asked for each profile source first; when it
	// returns no profile, jitpprof fetches the source itself (a file or
	// an http(s) URL). Either way the profile then goes through the JIT
	// stage.
	Fetch Fetcher
	// Sym replaces pprof's whole symbolizer (local binutils, symbolz,
	// demangling). Leave it nil unless that is what you want.
	Sym Symbolizer
	// Obj inspects binaries. Nil means jitpprof's in-process object
	// tool, which reads ELF files and their DWARF itself, or upstream's
	// binutils when -objtool=binutils or $PPROF_OBJTOOL=binutils asks
	// for them.
	Obj ObjTool
	// UI talks to the user. Nil means standard input and error, as
	// upstream pprof without readline.
	UI UI
	// HTTPServer serves the -http web interface.
	HTTPServer func(*HTTPServerArgs) error
	// HTTPTransport fetches profiles and symbols over HTTP. Nil means a
	// transport configured by the -tls_cert, -tls_key and -tls_ca flags.
	HTTPTransport http.RoundTripper

	// JITDirs are directories of JIT objects to use for every profile,
	// as if given with -jit_dir.
	JITDirs []string
	// Getenv reads environment variables (PPROF_JIT_DIR). Nil means
	// os.Getenv.
	Getenv func(string) string
}

// PProf acquires one or more profiles, runs the JIT stage on each,
// symbolizes and merges them, and generates the report, web UI or
// interactive session the flags ask for, exactly as upstream pprof's
// driver.PProf does.
//
// Upstream keeps its report settings (-sample_index, granularity,
// filters, ...) in package state, starting each call from the settings
// the previous call left: a program that calls PProf more than once
// should set on each command line the settings it depends on.
//
// While -jit_pid's snapshot of a process's JIT files exists (a temporary
// directory), PProf handles SIGINT and SIGTERM: it removes the snapshot,
// then ends the process with the signal, as if unhandled. The -http
// server, which serves until it is killed, leaves nothing behind so.
func PProf(o *Options) error {
	r := newRun(o)
	defer r.close()
	if err := gdriver.PProf(r.upstreamOptions()); err != nil {
		if r.flags.err != nil {
			return r.flags.err
		}
		return err
	}
	if e := r.pendingExport(); e != nil {
		if err := e.finish(r.writer(), r.ui); err != nil {
			return err
		}
	}
	if r.recordExit != 0 {
		return &ExitError{Status: r.recordExit}
	}
	return nil
}

// upstreamOptions returns the options for upstream's driver: the
// caller's plugins with jitpprof's in place of the ones it changes.
func (r *run) upstreamOptions() *gdriver.Options {
	return &gdriver.Options{
		Writer:        exportWriter{r: r},
		Flagset:       r.flags,
		Fetch:         &fetcher{run: r},
		Sym:           r.opts.Sym,
		Obj:           r.objTool(),
		UI:            &exportUI{UI: r.ui, r: r},
		HTTPServer:    r.opts.HTTPServer,
		HTTPTransport: r.transport,
	}
}

// newRun prepares the state of one PProf call.
func newRun(o *Options) *run {
	r := &run{}
	if o != nil {
		r.opts = *o
	}
	if r.opts.Getenv == nil {
		r.opts.Getenv = os.Getenv
	}
	fs := r.opts.Flagset
	if fs == nil {
		fs = NewFlagSet(os.Args[0], os.Args[1:], flag.ExitOnError)
	}
	r.flags = newFlagRecorder(fs)
	r.ui = r.opts.UI
	if r.ui == nil {
		r.ui = newStdUI()
	}
	r.transport = r.opts.HTTPTransport
	if r.transport == nil {
		r.transport = transport.New(r.flags)
	}
	mode, modeErr := objtoolMode(fs, r.opts.Getenv)
	syntax, syntaxErr := asmSyntax(fs)
	r.tool = newObjTool(&r.opts, mode, syntax, r.ui)
	// One cache of JIT objects for the run, shared by the JIT stage, the
	// perf.data converter and the object tool's code views; the object
	// tool indexes LLVM dumps' DWARF for it.
	if r.tool != nil {
		r.jitCache = r.tool.JIT()
	} else {
		r.jitCache = jprofile.NewCache(jprofile.CacheOptions{})
	}
	r.jit = newJIT(r.flags, r.ui, r.opts.JITDirs, r.opts.Getenv, r.jitCache)
	r.jit.binutils = r.tool == nil
	r.jit.display, r.jit.displayText = r.displayName, r.displayText
	r.flags.String("objtool", objtoolInProcess, "How binaries are read: inprocess or binutils")
	r.flags.String("asm_syntax", "auto", "Assembler syntax of disassembly: auto, go, gnu or intel")
	r.flags.AddExtraUsage(perfdataUsage)
	r.flags.AddExtraUsage(objtoolUsage)
	r.defineObjtoolFlags()
	r.maxProfileMB = r.flags.Int("max_profile_mb", jprofile.DefaultMaxDecompressed>>20, "The most a gzipped profile may decompress to, in MiB")
	r.perfBudget = &runBudget{flag: "max_perf_mb", def: defaultMaxPerfMB, what: "perf.data records decompressed (perf record -z)",
		mb: r.flags.Int("max_perf_mb", defaultMaxPerfMB, "The most the perf.data recordings of the run may decompress to (perf record -z), in MiB")}
	r.flags.AddExtraUsage(limitsUsage)
	r.flags.check = func() error {
		if modeErr != nil {
			return modeErr
		}
		if syntaxErr != nil {
			return syntaxErr
		}
		return r.jit.checkFlags()
	}
	r.exportFlags = defineExportFlags(r.flags)
	r.recordFlags = defineRecordFlags(r.flags)
	r.flags.sources = r.recordSources
	r.flags.sourceless = r.recordFlags.given
	r.flags.afterParse = func() { r.applyObjtoolFlags(); r.setPendingExport(r.commandLineExport()) }
	return r
}

// run is the state of one PProf call. Upstream calls Fetch concurrently,
// once per source; everything reachable from run is safe for that.
type run struct {
	opts      Options
	flags     *flagRecorder
	ui        UI
	transport http.RoundTripper
	jit       *jitStage
	jitCache  *jprofile.Cache // the run's JIT objects
	tool      *objtool.Tool   // jitpprof's object tool, nil if not used
	subst     substitutes     // files read from perf's build-ID cache

	maxProfileMB *int       // -max_profile_mb
	maxDebugMB   *int       // -max_debug_mb
	perfBudget   *runBudget // -max_perf_mb

	warmMu sync.Mutex
	warmed map[string]bool // files given to the object tool's Warm

	recordFlags recordFlags
	recordTemp  string    // the directory of a recording not kept, removed by close
	recordPath  string    // the recording this run made, if any
	recordStart time.Time // when it started
	recordExit  int       // the recorded command's exit status, if it failed

	exportFlags exportFlags
	exportMu    sync.Mutex
	export      *export // the -folded or -flamegraph report in progress
}

func (r *run) close() {
	r.closeRecording()
	r.jit.close()
	if r.tool != nil {
		r.tool.Close() // and its JIT object cache, the run's
	} else {
		r.jitCache.Close()
	}
}

// objTool returns the object tool for upstream's driver: the caller's,
// jitpprof's, or nil for upstream's binutils.
func (r *run) objTool() ObjTool {
	obj := r.opts.Obj
	if r.tool != nil {
		obj = r.tool
	}
	if obj == nil {
		return nil // upstream's binutils
	}
	return substObj{obj: obj, subst: &r.subst}
}

func (r *run) pendingExport() *export {
	r.exportMu.Lock()
	defer r.exportMu.Unlock()
	return r.export
}

func (r *run) setPendingExport(e *export) {
	r.exportMu.Lock()
	r.export = e
	r.exportMu.Unlock()
}

// writer returns the caller's Writer, or one creating files as upstream
// pprof's default does.
func (r *run) writer() Writer {
	if r.opts.Writer != nil {
		return r.opts.Writer
	}
	return fileWriter{}
}

// fileWriter creates the named file.
type fileWriter struct{}

func (fileWriter) Open(name string) (io.WriteCloser, error) { return os.Create(name) }
