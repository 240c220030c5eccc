package driver

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gdriver "github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
)

// These tests check each assumption of upstream.go against upstream's own
// driver, run in process with recording plugins: when one fails after an
// upstream version bump, the adapter must follow the new upstream.
//
// Upstream keeps its report settings in package state across PProf
// calls, so every run sets on its command line what it depends on, and
// each test runs in a child process of its own (see inFreshProcess), so
// that the settings it leaves do not reach the other tests.

// inFreshProcess runs the calling test again in a child process of the
// test binary and reports its failure; it returns true in that child,
// which is to run the test's body.
func inFreshProcess(t *testing.T) bool {
	t.Helper()
	const env = "JITPPROF_UPSTREAM_TEST"
	if os.Getenv(env) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Errorf("%s in a child process: %v\n%s", t.Name(), err, out)
	}
	return false
}

// upstreamRun is one call of upstream's driver with recording plugins.
type upstreamRun struct {
	flags  *flagRecorder
	ui     *scriptUI
	writer *memWriter
	obj    *recordingObjTool
	err    error
}

// runUpstream runs upstream's PProf on a copy of p with args (the source
// name is added) and the scripted interactive input lines.
func runUpstream(t *testing.T, p *profile.Profile, lines []string, args ...string) *upstreamRun {
	t.Helper()
	t.Setenv("PPROF_TMPDIR", t.TempDir())      // where upstream saves fetched profiles
	t.Setenv("PPROF_BINARY_PATH", t.TempDir()) // where it looks for binaries: nothing there
	r := &upstreamRun{
		flags:  newFlagRecorder(NewFlagSet("pprof", append(args, "test.prof"), flag.ContinueOnError)),
		ui:     &scriptUI{lines: lines},
		writer: &memWriter{files: map[string]*bytes.Buffer{}},
		obj:    &recordingObjTool{},
	}
	r.err = gdriver.PProf(&gdriver.Options{
		Flagset:    r.flags,
		Fetch:      fixedFetcher{p},
		Writer:     r.writer,
		UI:         r.ui,
		Obj:        r.obj,
		HTTPServer: func(*gdriver.HTTPServerArgs) error { return errors.New("no web UI in this test") },
	})
	return r
}

// report returns the report upstream wrote to the file name, failing the
// test if it wrote none.
func (r *upstreamRun) report(t *testing.T, name string) []byte {
	t.Helper()
	if r.err != nil {
		t.Fatalf("upstream pprof: %v (stderr %q)", r.err, r.ui.errs)
	}
	data, ok := r.writer.get(name)
	if !ok {
		t.Fatalf("upstream wrote no %s; it wrote %v (stderr %q)", name, r.writer.names(), r.ui.errs)
	}
	return data
}

func TestUpstreamFlagNames(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	r := runUpstream(t, heapProfile(), nil, "-top", "-symbolize=none", "-output=top.txt")
	r.report(t, "top.txt")
	bools := []string{flagProto, flagRaw, flagNoInlines, flagShowColumns}
	for _, s := range legacySampleIndexFlags {
		bools = append(bools, s.flag)
	}
	bools = append(bools, granularityFlags...)
	for _, name := range bools {
		if r.flags.bools[name] == nil {
			t.Errorf("upstream defines no bool flag -%s", name)
		}
	}
	for _, name := range []string{flagOutput, flagSampleIndex, flagSymbolize} {
		if r.flags.strings[name] == nil {
			t.Errorf("upstream defines no string flag -%s", name)
		}
	}
}

// TestUpstreamSampleIndexShortcuts: the sample type commandLineSampleIndex
// derives from the legacy shortcuts is the one upstream reports.
func TestUpstreamSampleIndexShortcuts(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	for _, tc := range []struct {
		profile *profile.Profile
		flags   []string
		extra   []string // what else the shortcut implies
	}{
		{heapProfile(), []string{"-inuse_space"}, nil},
		{heapProfile(), []string{"-inuse_objects"}, nil},
		{heapProfile(), []string{"-alloc_space"}, nil},
		{heapProfile(), []string{"-alloc_objects"}, nil},
		{heapProfile(), []string{"-alloc_objects", "-inuse_space"}, nil},
		{heapProfile(), []string{"-sample_index=alloc_space", "-inuse_objects"}, nil},
		{contentionProfile(), []string{"-contentions"}, nil},
		{contentionProfile(), []string{"-total_delay"}, nil},
		{contentionProfile(), []string{"-mean_delay"}, []string{"-mean"}},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			base := []string{"-top", "-symbolize=none", "-output=top.txt", "-sample_index=", "-mean=false"}
			r := runUpstream(t, tc.profile, nil, append(slices.Clone(base), tc.flags...)...)
			got := r.report(t, "top.txt")
			si := commandLineSampleIndex(r.flags)
			want := runUpstream(t, tc.profile, nil, append(append(slices.Clone(base), "-sample_index="+si), tc.extra...)...).report(t, "top.txt")
			if !bytes.Equal(got, want) {
				t.Errorf("upstream's report for %v differs from -sample_index=%s, what commandLineSampleIndex derives:\n%s\nwant\n%s", tc.flags, si, got, want)
			}
		})
	}
}

// TestUpstreamGranularityFlags: each granularity shortcut is upstream's
// -granularity of the same name.
func TestUpstreamGranularityFlags(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	base := []string{"-traces", "-symbolize=none", "-output=out.txt", "-sample_index=inuse_space"}
	reports := map[string]bool{}
	for _, g := range granularityFlags {
		r := runUpstream(t, heapProfile(), nil, append(slices.Clone(base), "-"+g)...)
		got := r.report(t, "out.txt")
		if cg := commandLineGranularity(r.flags); cg != g {
			t.Errorf("-%s: commandLineGranularity says %q", g, cg)
		}
		// The same granularity set at the prompt: the options listing
		// names it as the flag does.
		want := runUpstream(t, heapProfile(), []string{optGranularity + "=" + g, "traces > out.txt"}, "-symbolize=none", "-sample_index=inuse_space").report(t, "out.txt")
		if !bytes.Equal(got, want) {
			t.Errorf("-%s differs from the interactive %s=%s:\n%s\nwant\n%s", g, optGranularity, g, got, want)
		}
		reports[string(got)] = true
	}
	if len(reports) < 3 {
		t.Errorf("the granularities give only %d different reports: the test profile does not tell them apart", len(reports))
	}
}

// TestUpstreamSymbolizeModes: parseSymbolize says local symbolization
// happens exactly when upstream opens the binary, with or without
// symbols already in the mapping.
func TestUpstreamSymbolizeModes(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	for _, mode := range []string{"", "local", "fastlocal", "remote", "none", "no", "none:local", "remote:local",
		"local:remote", "force", "local:force", "demangle=full", "demangle=none", "demangle=templates", "demangle=default", "NONE",
		"full", "templates", "default", "demangle=bogus"} {
		for _, symbolized := range []bool{false, true} {
			p := heapProfile()
			if !symbolized {
				p.Mapping[0].HasFunctions = false
				p.Mapping[0].HasFilenames = false
				p.Mapping[0].HasLineNumbers = false
				for _, l := range p.Location {
					l.Line = nil
				}
			}
			r := runUpstream(t, p, nil, "-top", "-output=top.txt", "-sample_index=inuse_space", "-symbolize="+mode)
			m := parseSymbolize(mode)
			want := m.local && (!symbolized || m.force)
			if got := r.obj.opened() > 0; got != want {
				t.Errorf("-symbolize=%q, mapping symbolized %v: upstream opened the binary: %v; parseSymbolize %+v says %v", mode, symbolized, got, m, want)
			}
		}
	}
}

// TestUpstreamDemangle: upstream's output is the same whether the
// functions come with their system names as Names, as its symbolizer
// writes them, or with the Names upstreamDemangle gives them, as the JIT
// stage writes them, in the mode the JIT stage symbolizes in (local, no
// force, the default demangler); and every name upstreamDemangle changes
// is upstream's: C++ names with parameters, templates, clones and static
// functions, Rust's two schemes, names with an extra '_', C names, names
// that look demangled already, and text that is no name.
func TestUpstreamDemangle(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	names := []string{
		"_ZN5synth2g03f14Ei", "_ZNSt6vectorIiSaIiEE9push_backERKi", "_Z3tplILi7EEii", "_ZL8mixstatici",
		"_Z4workv.cold", "_ZN4core3fmt5write17h0123456789abcdefE", "_RNvCs1234_4core3foo", "horner",
		"__ZN5synth2g03f14Ei", "_start", "__libc_start_main", "_", "", "operator new", "_Z", "_ZN",
		"std::vector<int>::push_back(int const&)", "Foo.<init>", "main.(*T[...]).M", "a[1]::b(c)",
	}
	p := heapProfile()
	for i, name := range names {
		f := p.Function[i%len(p.Function)]
		if i >= len(p.Function) {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Filename: "jit.cc"}
			p.Function = append(p.Function, f)
			p.Location[0].Line = append(p.Location[0].Line, profile.Line{Function: f, Line: int64(i)})
		}
		f.Name, f.SystemName = name, name
	}
	pre := p.Copy()
	changed := 0
	for _, f := range pre.Function {
		if f.Name = upstreamDemangle(f.SystemName); f.Name != f.SystemName {
			changed++
		}
	}
	if changed < 8 {
		t.Errorf("upstreamDemangle changes only %d of the names: the test does not test it", changed)
	}
	upstreamNames := func(p *profile.Profile) map[string]string {
		got, err := profile.ParseData(runUpstream(t, p, nil, "-proto", "-output=out.pb.gz").report(t, "out.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range got.Function {
			m[f.SystemName] = f.Name
		}
		return m
	}
	want, got := upstreamNames(p), upstreamNames(pre)
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			t.Errorf("%q did not reach upstream's output", name)
		}
		if got[name] != w {
			t.Errorf("%q: upstream names it %q, or %q after upstreamDemangle's %q", name, w, got[name], upstreamDemangle(name))
		}
		if d := upstreamDemangle(name); d != name && d != w {
			t.Errorf("upstreamDemangle(%q) = %q, upstream %q", name, d, w)
		}
	}
}

// TestUpstreamReportNotice: upstream announces an -output file with
// reportNotice, and the export's reserved name is caught by
// isExportNotice; asking for two formats is refused.
func TestUpstreamReportNotice(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	r := runUpstream(t, heapProfile(), nil, "-proto", "-symbolize=none", "-output="+exportOutput)
	data := r.report(t, exportOutput)
	if _, err := profile.ParseData(data); err != nil {
		t.Errorf("upstream's -proto output does not parse: %v", err)
	}
	if len(r.ui.errArgs) != 1 || !isExportNotice(r.ui.errArgs[0]) {
		t.Errorf("upstream's messages %q: want one, the notice isExportNotice recognizes", r.ui.errs)
	}
	r = runUpstream(t, heapProfile(), nil, "-top", "-symbolize=none", "-output=top.txt")
	r.report(t, "top.txt")
	if want := reportNotice + "top.txt"; !slices.Contains(r.ui.errs, want) {
		t.Errorf("upstream's messages %q do not include %q", r.ui.errs, want)
	}
	r = runUpstream(t, heapProfile(), nil, "-proto", "-"+flagRaw, "-symbolize=none", "-output=x")
	if r.err == nil || len(r.writer.names()) != 0 {
		t.Errorf("-proto -raw: upstream wrote %v, error %v; want a refusal of two formats", r.writer.names(), r.err)
	}
}

// TestUpstreamInteractive: upstream's "options" listing gives the
// settings changed at the prompt to parseOptionsListing, and
// protoCommand writes the profile, filtered, to the reserved name.
func TestUpstreamInteractive(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	r := runUpstream(t, heapProfile(), []string{
		"sample_index=alloc_space", optGranularity + "=lines", "noinlines=true", "showcolumns=true",
		optionsCommand, protoCommand([]string{"funcB"}),
	}, "-symbolize=none", "-sample_index=inuse_space", "-functions", "-noinlines=false", "-showcolumns=false")
	if r.err != nil {
		t.Fatalf("upstream pprof: %v (stderr %q)", r.err, r.ui.errs)
	}
	opts := parseOptionsListing(strings.Join(r.ui.out, "\n"))
	for name, want := range map[string]string{flagSampleIndex: "alloc_space", optGranularity: "lines", flagNoInlines: "true", flagShowColumns: "true"} {
		if opts[name] != want {
			t.Errorf("options listing: %s = %q, want %q; listing:\n%s", name, opts[name], want, strings.Join(r.ui.out, "\n"))
		}
	}
	p, err := profile.ParseData(r.report(t, exportOutput))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		if !slices.ContainsFunc(s.Location, func(l *profile.Location) bool { return l.Line[0].Function.Name == "funcB" }) {
			t.Errorf("protoCommand([funcB]) kept a sample without funcB")
		}
	}
	if len(p.Sample) == 0 {
		t.Errorf("protoCommand([funcB]) kept no sample")
	}
}

// TestUpstreamUsage: withJITEnvUsage and withRecordUsage find their
// places in upstream's usage message.
func TestUpstreamUsage(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	ui := &scriptUI{}
	fs := NewFlagSet("pprof", nil, flag.ContinueOnError)
	gdriver.PProf(&gdriver.Options{Flagset: fs, UI: ui})
	usage := strings.Join(ui.out, "\n")
	if got := withJITEnvUsage(usage); got == usage || !strings.Contains(got, usageEnvHeader) ||
		strings.Index(got, "PPROF_JIT_DIR") > strings.Index(got, usageWindowsLine) {
		t.Errorf("withJITEnvUsage does not add jitpprof's variables to upstream's usage message:\n%s", usage)
	}
	got := withRecordUsage(usage)
	if i, j := strings.Index(got, "-record -pid PID"), strings.Index(got, usageDetailsLine); got == usage || i < 0 || i > j || j > strings.Index(got, "-callgrind") {
		t.Errorf("withRecordUsage does not add the -record forms to the synopsis of upstream's usage message:\n%s", usage)
	}
}

// TestUpstreamFetchNotices: upstream's own fetcher prints the notices
// jitpprof's fetcher prints.
func TestUpstreamFetchNotices(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	var buf bytes.Buffer
	if err := heapProfile().Write(&buf); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Write(buf.Bytes())
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("PPROF_TMPDIR", t.TempDir())
	ui := &scriptUI{}
	fs := NewFlagSet("pprof", []string{"-top", "-symbolize=none", "-seconds=2", "-output=top.txt", host + cpuProfileHandler}, flag.ContinueOnError)
	w := &memWriter{files: map[string]*bytes.Buffer{}}
	if err := gdriver.PProf(&gdriver.Options{Flagset: fs, UI: ui, Writer: w}); err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(ui.out), ui.errs...)
	for _, want := range []string{fetchingNotice("http://" + host + cpuProfileHandler + "?seconds=2"), waitNotice(2 * time.Second)} {
		if !slices.Contains(all, want) {
			t.Errorf("upstream's messages %q do not include %q", all, want)
		}
	}
}

// heapProfile is a symbolized heap profile whose four sample types,
// functions, files and lines all order differently.
func heapProfile() *profile.Profile {
	return testProfile([]*profile.ValueType{
		{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
		{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
	}, [][]int64{{1, 900, 40, 7000}, {50, 20, 2, 100}, {7, 300, 9, 2500}})
}

// contentionProfile is a symbolized contention profile.
func contentionProfile() *profile.Profile {
	return testProfile([]*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		[][]int64{{1, 9000}, {50, 200}, {7, 3000}})
}

// testProfile returns a profile with one sample of each values: main
// calling funcA, funcB and (inlined in funcB) funcC, in two files.
func testProfile(types []*profile.ValueType, values [][]int64) *profile.Profile {
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, File: "/fake/bin", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p := &profile.Profile{SampleType: types, Mapping: []*profile.Mapping{m}, PeriodType: types[0], Period: 1}
	fn := func(name, file string) *profile.Function {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		p.Function = append(p.Function, f)
		return f
	}
	mainFn, a, b, c := fn("main", "main.c"), fn("funcA", "a.c"), fn("funcB", "b.c"), fn("funcC", "b.c")
	loc := func(addr uint64, lines ...profile.Line) *profile.Location {
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: addr, Line: lines}
		p.Location = append(p.Location, l)
		return l
	}
	root := loc(0x401000, profile.Line{Function: mainFn, Line: 10, Column: 3})
	leaves := []*profile.Location{
		loc(0x402000, profile.Line{Function: a, Line: 20, Column: 5}),
		loc(0x403000, profile.Line{Function: c, Line: 31, Column: 7}, profile.Line{Function: b, Line: 30, Column: 2}),
		loc(0x403100, profile.Line{Function: b, Line: 35, Column: 9}),
	}
	for i, v := range values {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{leaves[i], root}, Value: v})
	}
	return p
}

// fixedFetcher returns a copy of its profile for any source.
type fixedFetcher struct{ p *profile.Profile }

func (f fixedFetcher) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	return f.p.Copy(), "", nil
}

// scriptUI answers ReadLine with its lines, then io.EOF, and records
// what upstream prints.
type scriptUI struct {
	lines   []string
	out     []string
	errs    []string
	errArgs [][]any
}

func (u *scriptUI) ReadLine(string) (string, error) {
	if len(u.lines) == 0 {
		return "", io.EOF
	}
	l := u.lines[0]
	u.lines = u.lines[1:]
	return l, nil
}

func (u *scriptUI) Print(args ...any) { u.out = append(u.out, fmt.Sprint(args...)) }

func (u *scriptUI) PrintErr(args ...any) {
	u.errs = append(u.errs, fmt.Sprint(args...))
	u.errArgs = append(u.errArgs, args)
}

func (u *scriptUI) IsTerminal() bool                    { return false }
func (u *scriptUI) WantBrowser() bool                   { return false }
func (u *scriptUI) SetAutoComplete(func(string) string) {}

// get returns the contents of the file name, if it was written.
func (w *memWriter) get(name string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.files[name]
	if !ok {
		return nil, false
	}
	return bytes.Clone(b.Bytes()), true
}

// names returns the names of the files written.
func (w *memWriter) names() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var names []string
	for n := range w.files {
		names = append(names, n)
	}
	return names
}

// recordingObjTool counts how often upstream opens the test profile's
// binary, /fake/bin, to symbolize it, and opens nothing.
type recordingObjTool struct {
	mu   sync.Mutex
	open int
}

func (o *recordingObjTool) Open(file string, start, _, _ uint64, _ string) (gdriver.ObjFile, error) {
	o.mu.Lock()
	if file == "/fake/bin" && start != 0 { // not the check of a first argument as binary
		o.open++
	}
	o.mu.Unlock()
	return nil, errors.New("not opened in this test")
}

func (o *recordingObjTool) Disasm(string, uint64, uint64, bool) ([]gdriver.Inst, error) {
	return nil, errors.New("no disassembly in this test")
}

func (o *recordingObjTool) opened() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.open
}
