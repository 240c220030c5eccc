package e2e

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/browsertest"
	"github.com/jitpprof/pprof/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// parseFolded parses folded-stacks output into its lines' values, keyed
// by stack, failing on a malformed line.
func parseFolded(t *testing.T, out []byte) map[string]int64 {
	t.Helper()
	stacks := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			t.Fatalf("malformed folded line %q", line)
		}
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("malformed value in folded line %q: %v", line, err)
		}
		if _, dup := stacks[line[:i]]; dup {
			t.Errorf("stack %q printed twice", line[:i])
		}
		stacks[line[:i]] = v
	}
	return stacks
}

// TestFoldedEveryValue checks -folded on the real MCJIT profiles, for
// every sample type of the CPU profile, the 2-value heap sample and the
// 4-value heap profile: the values add up to the total computed
// independently from the profile as upstream's parser reads it, and the
// JIT allocation stacks are there, named.
func TestFoldedEveryValue(t *testing.T) {
	for _, mr := range mcjitRuns(t) {
		for _, prof := range []string{"cpu.prof", "heap_sample.prof", "heap.prof"} {
			data, err := os.ReadFile(mr.path(prof))
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.SampleType); (prof == "heap.prof" && n != 4) || (prof == "heap_sample.prof" && n != 2) {
				t.Fatalf("%s has %d values per sample, want 4 for heap.prof and 2 for heap_sample.prof", prof, n)
			}
			for i, st := range p.SampleType {
				t.Run(fmt.Sprintf("%s/%s/%s", mr.name, prof, st.Type), func(t *testing.T) {
					var want int64
					for _, s := range p.Sample {
						want += s.Value[i]
					}
					r := runPProf(t, t.TempDir(), mr.env(), "-folded", "-sample_index="+st.Type, "-jit_dir", mr.jitDir(), mr.path(prof))
					stacks := parseFolded(t, r.stdout)
					var got int64
					jit := false
					for stack, v := range stacks {
						got += v
						jit = jit || strings.Contains(stack, ";jit_")
					}
					if got != want {
						t.Errorf("folded values add up to %d, want %d (the sum of %s over %d samples)", got, want, st.Type, len(p.Sample))
					}
					if !jit {
						t.Errorf("no stack with a JIT frame in %d stacks", len(stacks))
					}
					if prof == "heap.prof" && (st.Type == "alloc_space" || st.Type == "inuse_space") {
						key := "_start;__libc_start_main;__libc_start_call_main;main;jit_heap_round;jit_make_buffer"
						if stacks[key] <= 0 {
							t.Errorf("no bytes for %s; stacks: %v", key, stacks)
						}
					}
				})
			}
		}
	}
}

// TestExportGolden compares -folded and -flamegraph of the checked-in
// run with golden files. -show keeps only the fixture's own code, whose
// symbolization does not depend on the machine's system libraries.
func TestExportGolden(t *testing.T) {
	mr := mcjitRuns(t)[0]
	show := "-show=testdata/mcjit/"
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{golden: "heap.inuse_space.folded", args: []string{"-folded", "-sample_index=inuse_space", show, mr.path("heap.prof")}},
		{golden: "heap.alloc_objects.lines.folded", args: []string{"-folded", "-alloc_objects", "-lines", show, mr.path("heap.prof")}},
		{golden: "cpu.folded", args: []string{"-collapsed", show, mr.path("cpu.prof")}},
		{golden: "cpu.lines.columns.folded", args: []string{"-folded", "-lines", "-showcolumns", show, mr.path("cpu.prof")}},
		{golden: "cpu.svg", args: []string{"-flamegraph", "-flamegraph_title=MCJIT fixture CPU", show, mr.path("cpu.prof")}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := runPProf(t, t.TempDir(), mr.env(), append([]string{"-jit_dir", mr.jitDir()}, tc.args...)...)
			path := filepath.Join("testdata", "golden", tc.golden)
			if *update {
				if err := os.WriteFile(path, r.stdout, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(r.stdout, want) {
				t.Errorf("output differs from %s (run with -update if the change is right):\n got: %.3000s", path, r.stdout)
			}
			if strings.HasSuffix(tc.golden, ".svg") {
				if err := xml.Unmarshal(r.stdout, new(struct{})); err != nil {
					t.Errorf("the SVG is not well-formed XML: %v", err)
				}
			}
		})
	}
}

// TestFlameGraphInBrowser opens pprof -flamegraph of the MCJIT CPU
// profile in headless Chromium, checks that JIT frames are drawn and
// marked as such, clicks a JIT frame with a real mouse event and checks
// that it zooms to the full width, in the DOM and on screen.
func TestFlameGraphInBrowser(t *testing.T) {
	mr := mcjitRuns(t)[0]
	r := runPProf(t, t.TempDir(), mr.env(), "-flamegraph", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(r.stdout)
	}))
	defer srv.Close()

	page := browsertest.Start(t).NewPage(t)
	if err := page.SetViewport(1200, 500); err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate(srv.URL); err != nil {
		t.Fatal(err)
	}
	// The frame of jit_cpu_round: its tooltip says it is JIT code.
	const find = `(() => {
		const r = [...document.querySelectorAll('#frames rect')].find(r => r.querySelector('title')?.textContent.startsWith('jit_cpu_round\n'));
		if (!r) return null;
		const b = r.getBoundingClientRect();
		return {x: b.x, y: b.y, w: b.width, h: b.height, title: r.querySelector('title').textContent, fill: getComputedStyle(r).fill};
	})()`
	type box struct {
		X, Y, W, H  float64
		Title, Fill string
	}
	before, err := browsertest.EvalAs[*box](page, find)
	if err != nil || before == nil {
		t.Fatalf("no jit_cpu_round frame in the flame graph: %v", err)
	}
	if !strings.Contains(before.Title, "JIT") || !strings.Contains(before.Title, ".elf") {
		t.Errorf("the JIT frame's tooltip %q does not say it is JIT code from a .elf object", before.Title)
	}
	if before.W >= 1100 {
		t.Fatalf("jit_cpu_round is already %v px wide before zooming", before.W)
	}
	if err := page.Click(before.X+before.W/2, before.Y+before.H/2); err != nil {
		t.Fatal(err)
	}
	var after *box
	if err := page.WaitFor(`(() => { const r = [...document.querySelectorAll('#frames rect')].find(r => r.querySelector('title')?.textContent.startsWith('jit_cpu_round\n')); return r && r.getBoundingClientRect().width > 1170; })()`, 5*time.Second); err != nil {
		t.Fatalf("clicking jit_cpu_round did not zoom it to the full width: %v", err)
	}
	if after, err = browsertest.EvalAs[*box](page, find); err != nil || after == nil {
		t.Fatal(err)
	}
	shot, err := page.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	// Across the zoomed frame's row, from margin to margin, the frame's
	// own colour (but where its label's letters are).
	var fr, fg, fb uint32
	if _, err := fmt.Sscanf(after.Fill, "rgb(%d, %d, %d)", &fr, &fg, &fb); err != nil {
		t.Fatalf("frame fill %q: %v", after.Fill, err)
	}
	if fr == fg && fg == fb {
		t.Errorf("the JIT frame is grey (%s), want the JIT colour", after.Fill)
	}
	y := int(after.Y + after.H/2)
	same, n := 0, 0
	for x := int(after.X) + 1; x < int(after.X+after.W)-1; x++ {
		r, g, b, _ := img.At(x, y).RGBA()
		n++
		if r>>8 == fr && g>>8 == fg && b>>8 == fb {
			same++
		}
	}
	if n < 1100 || same < n*9/10 {
		t.Errorf("on screen, %d of %d pixels across the zoomed frame's row have its colour %s; want a full-width band", same, n, after.Fill)
	}
}

// TestFoldedInSpeedscope opens pprof -folded output of the MCJIT heap
// profile in speedscope, a real folded-stacks viewer (from the npm
// registry; ./test.sh installs it), in headless Chromium, and checks the
// totals its sandwich view shows.
func TestFoldedInSpeedscope(t *testing.T) {
	viewer := os.Getenv("JITPPROF_SPEEDSCOPE")
	if viewer == "" {
		testenv.Missing(t, "the speedscope viewer (JITPPROF_SPEEDSCOPE)", "npm ci --prefix build/speedscope (see test.sh)")
	}
	mr := mcjitRuns(t)[0]
	r := runPProf(t, t.TempDir(), mr.env(), "-folded", "-sample_index=inuse_space", "-jit_dir", mr.jitDir(), mr.path("heap.prof"))
	stacks := parseFolded(t, r.stdout)
	var total, makeBuffer int64
	for stack, v := range stacks {
		total += v
		if strings.HasSuffix(stack, ";jit_make_buffer") {
			makeBuffer += v
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/speedscope/", http.StripPrefix("/speedscope/", http.FileServer(http.Dir(viewer))))
	mux.HandleFunc("/heap.folded", func(w http.ResponseWriter, _ *http.Request) { w.Write(r.stdout) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	page := browsertest.Start(t).NewPage(t)
	if err := page.SetViewport(1200, 800); err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate(srv.URL + "/speedscope/index.html#profileURL=" + srv.URL + "/heap.folded"); err != nil {
		t.Fatal(err)
	}
	if err := page.WaitFor(`document.body.innerText.includes('heap.folded')`, 20*time.Second); err != nil {
		t.Fatalf("speedscope did not load the profile: %v", err)
	}
	// The sandwich view lists every function with its total.
	if err := page.WaitFor(`(() => { const t = [...document.querySelectorAll('div, span')].find(e => e.textContent.trim().endsWith('Sandwich') && e.children.length <= 2); if (t) t.click(); return document.body.innerText.includes('Symbol Name'); })()`, 10*time.Second); err != nil {
		t.Fatalf("no sandwich view: %v", err)
	}
	text, err := browsertest.EvalAs[string](page, "document.body.innerText")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		fmt.Sprintf("%s (100%%)\n\t0 (<0.01%%)\n\t_start", commas(total)),
		fmt.Sprintf("%s (", commas(makeBuffer)),
		"jit_make_buffer", "jit_heap_round", "leaf_alloc_chain",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("speedscope's sandwich view lacks %q:\n%s", w, text)
		}
	}
}

// commas formats n with thousands separators, as speedscope does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestInteractiveExports runs folded and flamegraph as interactive
// commands: they follow sample_index changed at the prompt, take focus
// regexps and "> file" like upstream's commands, and leave the session
// usable.
func TestInteractiveExports(t *testing.T) {
	mr := mcjitRuns(t)[0]
	dir := t.TempDir()
	svg := filepath.Join(dir, "alloc.svg")
	batch := runPProf(t, dir, mr.env(), "-folded", "-sample_index=alloc_space", "-jit_dir", mr.jitDir(), mr.path("heap.prof"))
	focused := runPProf(t, dir, mr.env(), "-folded", "-sample_index=alloc_space", "-focus=jit_tree", "-jit_dir", mr.jitDir(), mr.path("heap.prof"))

	cmd := pprofCmd(t, dir, mr.env(), "-jit_dir", mr.jitDir(), mr.path("heap.prof"))
	cmd.Stdin = strings.NewReader("sample_index=alloc_space\nfolded\nfolded jit_tree > focused.folded\nflamegraph > " + svg + "\ntop 1\nquit\n")
	r := run(cmd)
	if r.err != nil {
		t.Fatalf("interactive pprof: %v\n%s", r.err, r.stderr)
	}
	if !bytes.Contains(r.stdout, batch.stdout) {
		t.Errorf("interactive folded output differs from -folded -sample_index=alloc_space:\n got: %.2000s\nwant: %.2000s", r.stdout, batch.stdout)
	}
	got, err := os.ReadFile(filepath.Join(dir, "focused.folded"))
	if err != nil || !bytes.Equal(got, focused.stdout) {
		t.Errorf("'folded jit_tree > focused.folded' wrote %q (%v), want what -focus=jit_tree gives: %q", got, err, focused.stdout)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatalf("flamegraph > file wrote nothing: %v\n%s", err, r.stderr)
	}
	if err := xml.Unmarshal(data, new(struct{})); err != nil || !bytes.Contains(data, []byte("alloc_space")) {
		t.Errorf("the interactive flame graph is not an alloc_space SVG (%v)", err)
	}
	if !bytes.Contains(r.stdout, []byte("flat%")) {
		t.Errorf("the session did not go on to the top command after the exports:\n%s", r.stdout)
	}
	if bytes.Contains(r.stderr, []byte("jitpprof-export")) || bytes.Contains(r.stdout, []byte("sample_index  ")) {
		t.Errorf("internal export plumbing leaked into the output:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestExportsRefuseNegativeValues: a -diff_base comparison has negative
// values, which neither -folded nor -flamegraph can carry: both refuse,
// exit non-zero, and say why.
func TestExportsRefuseNegativeValues(t *testing.T) {
	mr := mcjitRuns(t)[0]
	// The base: the same profile with every value doubled, so that the
	// difference is negative everywhere.
	p, _ := pprofProto(t, mr, "cpu.prof", "-jit_dir", mr.jitDir())
	for _, s := range p.Sample {
		for i := range s.Value {
			s.Value[i] *= 2
		}
	}
	base := filepath.Join(t.TempDir(), "base.pb.gz")
	f, err := os.Create(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, format := range []string{"-folded", "-flamegraph"} {
		out := filepath.Join(t.TempDir(), "out")
		r := run(pprofCmd(t, t.TempDir(), mr.env(), format, "-output", out, "-diff_base", base, "-jit_dir", mr.jitDir(), mr.path("cpu.prof")))
		if r.err == nil || !strings.Contains(string(r.stderr), "negative value") {
			t.Errorf("%s with -diff_base: exit %v, stderr %s", format, r.err, r.stderr)
		}
	}
}
