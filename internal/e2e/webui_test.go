package e2e

import (
	"bufio"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/browsertest"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestWebUI serves the real MCJIT CPU profile with pprof -http, as a user
// does (without opening a browser), and drives headless Chromium over
// upstream's web UI: the flame graph, graph, top, source and disassembly
// views must show the JIT functions with their file:line.
func TestWebUI(t *testing.T) {
	testenv.Tool(t, "dot", "graphviz")
	testenv.Tool(t, "objdump", "binutils")
	mr := mcjitRuns(t)[0]
	// From the checkout's top directory, as the README runs it, with no
	// -source_path or -trim_path: the source page finds the scripts.
	base := serveWebUI(t, testenv.RepoRoot(t), mr.env(), "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
	page := browsertest.Start(t).NewPage(t)
	if err := page.SetViewport(1400, 900); err != nil {
		t.Fatal(err)
	}
	const workload = "workload.c"
	for _, tc := range []struct {
		view string
		path string
		want []string
	}{
		{view: "flame graph", path: "/ui/flamegraph", want: []string{"jit_cpu_round", "jit_sort_records", "jit_tree_sum", "leaf_crc32"}},
		{view: "flame graph by line", path: "/ui/flamegraph?g=lines", want: []string{"jit_poly:263", "horner:252", "jit_sort_records:193"}},
		{view: "graph", path: "/ui/graph?g=lines", want: []string{"jit_sort_records", workload + ":193", "horner", workload + ":252"}},
		{view: "top", path: "/ui/top?g=lines", want: []string{"jit_sort_records", workload + ":193", "leaf_crc32", "leaf.c:15"}},
		// Upstream's source view disassembles 500 bytes around each hot
		// address with objdump, which lists a relocatable object's
		// sections in file order; it keeps only instructions in rising
		// address order, so functions whose sections come after one at a
		// higher address get no listing (see doc/guide.md). This
		// fixture's allocator hands out code top down: jit_sort_records
		// has the highest address of its neighbours.
		{view: "source", path: "/ui/source?f=jit_sort_records", want: []string{"jit_sort_records", workload, "uint64_t jit_sort_records(unsigned n, unsigned round) {"}},
		{view: "disassembly", path: "/ui/disasm?f=jit_poly", want: []string{"jit_poly", "4ffffffff8b8", workload + ":252"}},
	} {
		t.Run(tc.view, func(t *testing.T) {
			if err := page.Navigate(base + tc.path); err != nil {
				t.Fatal(err)
			}
			if err := page.WaitFor(viewShows(tc.want), 20*time.Second); err != nil {
				text, _ := browsertest.EvalAs[string](page, `document.body.innerText.slice(0, 3000)`)
				t.Errorf("%s view lacks some of %q: %v\npage text: %s", tc.view, tc.want, err, text)
			}
			text, err := browsertest.EvalAs[string](page, "document.body.innerText")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text, "[libleaf.so]") {
				t.Errorf("%s view shows unsymbolized [libleaf.so] code", tc.view)
			}
		})
	}
}

// serveWebUI starts pprof -http on args in dir, as a user does (without
// opening a browser), and returns the address it serves the web UI at.
func serveWebUI(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := pprofCmd(t, dir, env, append([]string{"-http=127.0.0.1:", "-no_browser"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		serving := regexp.MustCompile(`Serving web UI on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case base := <-urls:
		return base
	case <-time.After(60 * time.Second):
		t.Fatal("pprof -http did not say where it serves the web UI")
	}
	return ""
}

// TestWebUIPerfData serves a perf.data recording of Node.js (perf record
// -k 1, node --perf-prof; testdata/perf/generate.sh) with pprof -http:
// the JavaScript functions are named from the jitdump with no perf
// inject, and V8's own C++ from node's symbols.
func TestWebUIPerfData(t *testing.T) {
	dir := freshPerfDir(t)
	base := serveWebUI(t, t.TempDir(), nil, filepath.Join(dir, "node.data"))
	checkViews(t, base, []webView{
		{view: "top", path: "/ui/top", want: []string{"fib", "sieve", "v8::internal::"}},
		{view: "flame graph", path: "/ui/flamegraph", want: []string{"fib", "sieve"}},
	})
}

// A webView is a page of the web UI and texts it must show.
type webView struct {
	view, path string
	want       []string
}

// checkViews opens each view of the web UI served at base in headless
// Chromium and fails t unless its text (the SVG's included) shows all
// its want within 20 s.
func checkViews(t *testing.T, base string, views []webView) {
	t.Helper()
	page := browsertest.Start(t).NewPage(t)
	for _, tc := range views {
		if err := page.Navigate(base + tc.path); err != nil {
			t.Fatal(err)
		}
		if err := page.WaitFor(viewShows(tc.want), 20*time.Second); err != nil {
			text, _ := browsertest.EvalAs[string](page, `document.body.innerText.slice(0, 3000)`)
			t.Errorf("%s view lacks some of %q: %v\npage text: %s", tc.view, tc.want, err, text)
		}
	}
}

// viewShows returns a JavaScript condition true when the page's text,
// with its SVG's, contains every string of want.
func viewShows(want []string) string {
	return `(() => { const t = document.body.innerText + [...document.querySelectorAll('svg text')].map(e => e.textContent).join('\n'); return ` +
		jsIncludesAll("t", want) + `; })()`
}

// jsIncludesAll returns a JavaScript expression true when the string
// variable v contains every string of want.
func jsIncludesAll(v string, want []string) string {
	var parts []string
	for _, w := range want {
		parts = append(parts, v+".includes("+jsString(w)+")")
	}
	return strings.Join(parts, " && ")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// TestWebUIRecordNode is the one command a Node.js user runs: pprof
// -http -record -- node work.js, no flag given to node and no other
// tool installed. The web UI shows the JavaScript functions with their
// file:line (from the jitdump V8 was told to write), V8's C++ and libc
// by their names, and the kernel's functions from its symbols.
func TestWebUIRecordNode(t *testing.T) {
	requireRecord(t)
	node := testenv.Tool(t, "node", "nodejs")
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	base := serveWebUI(t, t.TempDir(), nil, "-record", "--", node, script, "1500")
	checkViews(t, base, []webView{
		{view: "top by line", path: "/ui/top?g=lines", want: []string{"fib", "work.js:5", "sieve", "work.js:6"}},
		{view: "top", path: "/ui/top", want: []string{"fib", "strwork", "v8::internal::", "__libc_start_call_main", "entry_SYSCALL_64"}},
		{view: "flame graph", path: "/ui/flamegraph", want: []string{"fib", "sieve", "main"}},
	})
}
