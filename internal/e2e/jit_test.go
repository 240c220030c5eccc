package e2e

import (
	"bytes"
	"debug/elf"
	"fmt"
	stdhtml "html"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
	jprofile "github.com/jitpprof/pprof/profile"
)

// TestJITMatchesLLVMSymbolizer checks every location of the real CPU and
// heap profiles of the host, under MCJIT and each ORC mode, built with
// each LLVM version of ./test.sh's matrix, against that version's
// llvm-symbolizer: a JIT address gets, in one mapping per object, exactly
// the frames llvm-symbolizer gives for it in that object; a libleaf.so
// address (the library right above the JIT code, whose base upstream pprof
// moves) gets exactly the frames llvm-symbolizer gives for it in
// libleaf.so. With $JITPPROF_MATRIX set, it appends the matrix (version,
// mode, profile, locations compared, differences) to that file.
func TestJITMatchesLLVMSymbolizer(t *testing.T) {
	var matrix []string
	defer func() {
		if path := os.Getenv("JITPPROF_MATRIX"); path != "" {
			if err := os.WriteFile(path, []byte(strings.Join(matrix, "")), 0o644); err != nil {
				t.Error(err)
			}
		}
	}()
	for _, mr := range append(mcjitRuns(t), orcRuns(t)...) {
		objs, errs := jprofile.Load([]string{mr.jitDir()})
		if len(errs) != 0 || objs.Len() != 2 {
			t.Fatalf("%s: loading JIT objects: %d objects, errors %v; want 2 and none", mr.name, objs.Len(), errs)
		}
		for _, prof := range []string{"cpu.prof", "heap.prof", "heap_sample.prof"} {
			t.Run(mr.name+"/"+prof, func(t *testing.T) {
				p, _ := pprofProto(t, mr, prof, "-jit_dir", mr.jitDir())
				jitLocs := map[string][]*profile.Location{}
				var leafLocs []*profile.Location
				for _, l := range p.Location {
					obj, _ := objs.Lookup(l.Address)
					m := l.Mapping
					switch {
					case obj != nil:
						if m == nil || m.File != obj.Path || m.Start != 0 || m.Limit != ^uint64(0) || m.Offset != 0 {
							t.Errorf("JIT address %#x has mapping %+v, want [0, ^0) of %s", l.Address, m, obj.Path)
							continue
						}
						jitLocs[m.File] = append(jitLocs[m.File], l)
					case m != nil && filepath.Base(m.File) == "libleaf.so":
						leafLocs = append(leafLocs, l)
					}
				}
				if len(jitLocs) == 0 || len(leafLocs) == 0 {
					t.Fatalf("found %d JIT objects and %d libleaf.so locations in the profile, want some of each", len(jitLocs), len(leafLocs))
				}
				n, diffs := 0, 0
				for obj, locs := range jitLocs {
					c, d := compareLocations(t, mr.llvm, obj, locs, 0)
					n, diffs = n+c, diffs+d
				}
				leaf := leafLocs[0].Mapping
				c, d := compareLocations(t, mr.llvm, leaf.File, leafLocs, loadBias(t, leaf))
				n, diffs = n+c, diffs+d
				t.Logf("%d locations compared with llvm-symbolizer", n)
				matrix = append(matrix, fmt.Sprintf("| %d | %s | %s | %s | %d | %d |\n", mr.llvm, mr.jit, mr.name, prof, n, diffs))
			})
		}
	}
}

// compareLocations compares the lines of locs, which belong to the
// object file obj, with the frames llvm-symbolizer of LLVM version llvm
// gives for address-bias, and returns how many locations it compared and
// how many differed.
func compareLocations(t *testing.T, llvm int, obj string, locs []*profile.Location, bias uint64) (n, diffs int) {
	t.Helper()
	addrs := make([]uint64, len(locs))
	for i, l := range locs {
		addrs[i] = l.Address - bias
	}
	want := testenv.LLVMSymbolizeWith(t, llvm, obj, addrs)
	for i, l := range locs {
		got := describeLines(l.Line)
		var w []string
		for _, f := range want[i] {
			w = append(w, fmt.Sprintf("%s %s:%d", f.Func, f.File, f.Line))
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s %#x: frames %q, llvm-symbolizer says %q", filepath.Base(obj), l.Address, got, w)
			diffs++
		}
	}
	return len(locs), diffs
}

func describeLines(lines []profile.Line) []string {
	var out []string
	for _, ln := range lines {
		out = append(out, fmt.Sprintf("%s %s:%d", ln.Function.SystemName, ln.Function.Filename, ln.Line))
	}
	return out
}

// loadBias returns what to subtract from a run-time address in mapping m
// to get the address in m's file: the segment holding the mapping's file
// offset, loaded at m.Start.
func loadBias(t *testing.T, m *profile.Mapping) uint64 {
	t.Helper()
	f, err := elf.Open(m.File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off <= m.Offset && m.Offset < p.Off+p.Filesz {
			return m.Start - m.Offset + p.Off - p.Vaddr
		}
	}
	t.Fatalf("%s: no PT_LOAD segment holds offset %#x", m.File, m.Offset)
	return 0
}

// TestJITReports checks the reports people read, on the checked-in run:
// JIT functions with file:line and inline frames, the library next to
// the JIT code with its own functions, and none of upstream's
// "[libleaf.so]" for JIT code.
func TestJITReports(t *testing.T) {
	mr := mcjitRuns(t)[0]
	// Reports that trim source paths (-top, -list) show the fixture's
	// sources as testdata/mcjit/FILE; -traces shows them as recorded.
	const src = "testdata/mcjit/"
	const raw = "/proc/self/cwd/" + src
	for _, tc := range []struct {
		name string
		args []string
		prof string
		want []string
	}{
		{
			name: "cpu -top -lines",
			args: []string{"-top", "-lines"},
			prof: "cpu.prof",
			want: []string{
				"horner " + src + "workload.c:252 (inline)",
				"jit_sort_records " + src + "workload.c:193",
				"jit_tree_sum " + src + "workload.c:229",
				"dot_row_col " + src + "workload.c:74 (inline)",
				"fnv1a_step " + src + "workload.c:100 (inline)",
				"leaf_crc32 " + src + "leaf.c:15",
			},
		},
		{
			name: "cpu -traces -lines: inline chains",
			args: []string{"-traces", "-lines"},
			prof: "cpu.prof",
			want: []string{
				"horner " + raw + "workload.c:252 (inline)\n             jit_poly " + raw + "workload.c:263\n",
				"fnv1a_step " + raw + "workload.c:100 (inline)\n             fnv1a_buf " + raw + "workload.c:106 (inline)\n             jit_hash_text " + raw + "workload.c:122\n",
			},
		},
		{
			name: "cpu -top: functions",
			args: []string{"-top"},
			prof: "cpu.prof",
			want: []string{"jit_poly", "jit_matmul", "jit_sieve", "jit_hash_text", "leaf_mix64", "leaf_map_reduce"},
		},
		{
			// From the checkout's top directory, with no -source_path or
			// -trim_path: the fixture's sources are named
			// /proc/self/cwd/testdata/mcjit/FILE (see generate.sh).
			name: "cpu -list: annotated JIT source",
			args: []string{"-list", "jit_sort_records"},
			prof: "cpu.prof",
			want: []string{
				"ROUTINE ======================== jit_sort_records in " + src + "workload.c",
				"180:NOINLINE uint64_t jit_sort_records(unsigned n, unsigned round) {",
				"193:    while (j > 0 && record_less(&v, &r[j - 1])) {",
			},
		},
		{
			name: "heap -traces -lines: JIT allocation stacks",
			args: []string{"-traces", "-lines", "-sample_index=alloc_space"},
			prof: "heap.prof",
			want: []string{
				"jit_make_buffer " + raw + "workload.c:282\n             jit_heap_round " + raw + "workload.c:305\n",
				"leaf_alloc_chain " + raw + "leaf.c:45\n             jit_heap_round " + raw + "workload.c:303\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-jit_dir", mr.jitDir()}, tc.args...), mr.path(tc.prof))
			r := runPProf(t, testenv.RepoRoot(t), mr.env(), args...)
			out := string(r.stdout)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "[libleaf.so]") || strings.Contains(out, "<unknown>") {
				t.Errorf("output has unsymbolized code ([libleaf.so] or <unknown>):\n%s", out)
			}
			if !strings.Contains(string(r.stderr), "JIT objects: using 2 from "+mr.jitDir()) {
				t.Errorf("stderr does not say which JIT objects were used: %s", r.stderr)
			}
		})
	}

	// Upstream, on the same profile, merges the JIT region into libleaf.so:
	// it names no JIT function, and either leaves the merged mapping
	// unsymbolized ("[libleaf.so]") or, with the base the merge gives,
	// names JIT code after libleaf.so's own symbols.
	cmd := pprofCmd(t, t.TempDir(), mr.env(), "-top", mr.path("cpu.prof"))
	cmd.Path, cmd.Args[0] = testenv.UpstreamPProf(t), testenv.UpstreamPProf(t)
	if r := run(cmd); !bytes.Contains(r.stdout, []byte("[libleaf.so]")) && !bytes.Contains(r.stdout, []byte("__FRAME_END__")) || bytes.Contains(r.stdout, []byte("jit_poly")) {
		t.Errorf("upstream pprof no longer shows the merge bug on the fixture; is the fixture still exercising it?\n%s", r.stdout)
	}
}

// TestJITProtoRoundTrip checks that -proto keeps the JIT symbolization:
// reports from the written profile, read without any JIT object, equal
// those made directly.
func TestJITProtoRoundTrip(t *testing.T) {
	mr := mcjitRuns(t)[0]
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.pb.gz")
	runPProf(t, dir, mr.env(), "-proto", "-output", saved, "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
	for _, format := range [][]string{{"-top", "-lines"}, {"-traces"}} {
		direct := runPProf(t, dir, mr.env(), append(append([]string{"-jit_dir", mr.jitDir()}, format...), mr.path("cpu.prof"))...)
		again := runPProf(t, dir, mr.env(), append(format, saved)...)
		if !bytes.Equal(direct.stdout, again.stdout) {
			t.Errorf("%v of the saved profile differs from the direct report:\n got: %s\nwant: %s", format, again.stdout, direct.stdout)
		}
		if bytes.Contains(again.stderr, []byte("JIT objects")) {
			t.Errorf("reading the saved profile used JIT objects: %s", again.stderr)
		}
	}
}

// TestJITInGoStyleProfile checks a proto profile in the shape Go's
// runtime/pprof writes: anonymous mappings dropped, so JIT locations
// have no mapping at all.
func TestJITInGoStyleProfile(t *testing.T) {
	mr := mcjitRuns(t)[0]
	data, err := os.ReadFile(mr.path("cpu.prof"))
	if err != nil {
		t.Fatal(err)
	}
	p, maps, err := jprofile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jprofile.Extend(p, maps, nil); err != nil { // unmerged mappings
		t.Fatal(err)
	}
	var kept []*profile.Mapping
	for _, m := range p.Mapping {
		if m.File != "" {
			kept = append(kept, m)
		}
	}
	for _, l := range p.Location {
		if l.Mapping != nil && l.Mapping.File == "" {
			l.Mapping = nil
		}
	}
	p.Mapping = kept
	for i, m := range p.Mapping {
		m.ID = uint64(i + 1)
	}
	goStyle := filepath.Join(t.TempDir(), "go-style.pb.gz")
	f, err := os.Create(goStyle)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	r := runPProf(t, t.TempDir(), mr.env(), "-top", "-lines", "-jit_dir", mr.jitDir(), goStyle)
	for _, w := range []string{"jit_sort_records testdata/mcjit/workload.c:193", "leaf_crc32 testdata/mcjit/leaf.c:15"} {
		if !bytes.Contains(r.stdout, []byte(w)) {
			t.Errorf("-top -lines lacks %q:\n%s", w, r.stdout)
		}
	}
}

// TestJITPDF renders the CPU profile with -pdf -lines through real
// Graphviz, and checks the PDF's text (pdftotext) and its first page
// rendered to PNG (pdftoppm).
func TestJITPDF(t *testing.T) {
	testenv.Tool(t, "dot", "graphviz")
	pdftotext := testenv.Tool(t, "pdftotext", "poppler-utils")
	pdftoppm := testenv.Tool(t, "pdftoppm", "poppler-utils")
	mr := mcjitRuns(t)[0]
	dir := t.TempDir()
	pdf := filepath.Join(dir, "cpu.pdf")
	runPProf(t, dir, mr.env(), "-pdf", "-lines", "-output", pdf, "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))

	text, err := exec.Command(pdftotext, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, w := range []string{"jit_sort_records", "workload.c:193", "horner", "workload.c:252", "leaf_crc32", "leaf.c:15"} {
		if !bytes.Contains(text, []byte(w)) {
			t.Errorf("the PDF's text lacks %q", w)
		}
	}
	if bytes.Contains(text, []byte("libleaf.so]")) {
		t.Errorf("the PDF shows unsymbolized [libleaf.so] code")
	}

	page := filepath.Join(dir, "page")
	if out, err := exec.Command(pdftoppm, "-png", "-r", "40", "-f", "1", "-l", "1", "-singlefile", pdf, page).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	f, err := os.Open(page + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("page 1 is not a PNG: %v", err)
	}
	b := img.Bounds()
	colors := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			colors[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	// A call graph has black text and edges and coloured node boxes on
	// white: many colours. A blank or failed page has one or two.
	if b.Dx() < 200 || b.Dy() < 200 || len(colors) < 16 {
		t.Errorf("page 1 renders as %dx%d pixels with %d colours; want a drawn graph", b.Dx(), b.Dy(), len(colors))
	}
}

// TestJITModesAndSources checks the ways JIT symbolization is switched
// and reached: -jit_symbolizer=binutils gives the same frames through
// pprof's llvm-symbolizer, -symbolize=none leaves JIT code alone, -raw
// shows the per-object mappings, PPROF_JIT_DIR and the profile's own
// directory find the objects, and a profile fetched over HTTP goes
// through the JIT stage too.
func TestJITModesAndSources(t *testing.T) {
	mr := mcjitRuns(t)[0]
	inprocess := runPProf(t, t.TempDir(), mr.env(), "-traces", "-lines", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))

	t.Run("binutils", func(t *testing.T) {
		r := runPProf(t, t.TempDir(), mr.env(), "-traces", "-lines", "-jit_symbolizer=binutils", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
		if !bytes.Equal(r.stdout, inprocess.stdout) {
			t.Errorf("-jit_symbolizer=binutils differs from the in-process symbolizer:\n got: %.1500s\nwant: %.1500s", r.stdout, inprocess.stdout)
		}
	})
	t.Run("-symbolize=none", func(t *testing.T) {
		r := runPProf(t, t.TempDir(), mr.env(), "-traces", "-symbolize=none", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
		if regexp.MustCompile(`jit_(cpu_round|poly|sort_records|tree_sum)`).Match(r.stdout) || !bytes.Contains(r.stdout, []byte("[workload.c-")) {
			t.Errorf("-symbolize=none: want JIT code unsymbolized, named after its object:\n%.1500s", r.stdout)
		}
	})
	t.Run("-raw", func(t *testing.T) {
		r := runPProf(t, t.TempDir(), mr.env(), "-raw", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
		for _, obj := range []string{objectPath(mr, "workload.c-1346edd604499fbd"), objectPath(mr, "workload.c-df2284e66d575719")} {
			want := "0x0/0xffffffffffffffff/0x0 " + obj + "  [FN][FL][LN][IN]"
			if !bytes.Contains(r.stdout, []byte(want)) {
				t.Errorf("-raw lacks the mapping %q", want)
			}
		}
		if !regexp.MustCompile(`0x4ffffffff000/0x500000000000/0x0 +\n`).Match(r.stdout) {
			t.Errorf("-raw lacks the anonymous JIT region as a mapping of its own:\n%.3000s", r.stdout)
		}
	})
	t.Run("PPROF_JIT_DIR", func(t *testing.T) {
		r := runPProf(t, t.TempDir(), append(mr.env(), "PPROF_JIT_DIR=/nonexistent:"+mr.jitDir()), "-traces", "-lines", mr.path("cpu.prof"))
		if !bytes.Equal(r.stdout, inprocess.stdout) {
			t.Errorf("with PPROF_JIT_DIR, output differs from -jit_dir's")
		}
		if !bytes.Contains(r.stderr, []byte("/nonexistent: reading JIT object directory")) {
			t.Errorf("no warning about the missing directory of PPROF_JIT_DIR: %s", r.stderr)
		}
	})
	t.Run("profile's own directory", func(t *testing.T) {
		dir := t.TempDir()
		for _, name := range []string{"cpu.prof", "jit/workload.c-1346edd604499fbd.elf", "jit/workload.c-1346edd604499fbd.meta",
			"jit/workload.c-df2284e66d575719.elf", "jit/workload.c-df2284e66d575719.meta"} {
			data, err := os.ReadFile(mr.path(name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := runPProf(t, t.TempDir(), mr.env(), "-traces", "-lines", filepath.Join(dir, "cpu.prof"))
		if !bytes.Equal(r.stdout, inprocess.stdout) {
			t.Errorf("with the objects beside the profile, output differs from -jit_dir's")
		}
		if !bytes.Contains(r.stderr, []byte("JIT objects: using 2 from "+dir)) {
			t.Errorf("stderr does not say the objects came from the profile's directory: %s", r.stderr)
		}
	})
	t.Run("over HTTP", func(t *testing.T) {
		data, err := os.ReadFile(mr.path("cpu.prof"))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(data) }))
		defer srv.Close()
		r := runPProf(t, t.TempDir(), mr.env(), "-traces", "-lines", "-jit_dir", mr.jitDir(), srv.URL+"/pprof/profile")
		if !bytes.Equal(r.stdout, inprocess.stdout) {
			t.Errorf("the profile fetched over HTTP reports differently from the local file:\n got: %.1500s\nwant: %.1500s", r.stdout, inprocess.stdout)
		}
	})
}

// objectPath returns the absolute path of a JIT object of run mr.
func objectPath(mr mcjitRun, name string) string {
	p, _ := filepath.Abs(filepath.Join(mr.jitDir(), name+".elf"))
	return p
}

// TestJITCodeViews checks the code views on JIT and native functions of
// the real MCJIT profile, through jitpprof's own object tool: -disasm and
// -weblist show each function with its own samples only (the listing's
// flat equals the function's flat in -top -noinlines, nothing exceeds
// 100%), every view prints the same bytes run after run, and
// -symbolize=force, which makes upstream re-symbolize every mapping with
// the object tool, still names the JIT functions.
func TestJITCodeViews(t *testing.T) {
	for _, mr := range mcjitRuns(t) {
		t.Run(mr.name, func(t *testing.T) {
			jit := []string{"-jit_dir", mr.jitDir(), "-unit=ms"}
			pprofOut := func(args ...string) string {
				t.Helper()
				r := runPProf(t, t.TempDir(), mr.env(), append(append(jit, args...), mr.path("cpu.prof"))...)
				return string(r.stdout)
			}
			top := pprofOut("-top", "-noinlines", "-nodecount=1000")
			flatOf := func(fn string) string {
				m := regexp.MustCompile(`(?m)^\s*(\S+)\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+` + regexp.QuoteMeta(fn) + `$`).FindStringSubmatch(top)
				if m == nil {
					t.Fatalf("-top -noinlines has no row for %s:\n%s", fn, top)
				}
				return m[1]
			}
			pct := regexp.MustCompile(`(\d+(?:\.\d+)?)% of Total`)
			for _, tc := range []struct {
				fn string
				// inlined says that copies of fn are inlined into other
				// functions too: the source view then shows them as well.
				inlined bool
			}{{"jit_sort_records", false}, {"jit_tree_sum", false}, {"jit_poly", false}, {"jit_hash_text", false}, {"leaf_crc32", false}, {"leaf_mix64", true}} {
				fn := tc.fn
				want := flatOf(fn)
				var first string
				for i := range 4 {
					out := pprofOut("-disasm", fn)
					if i == 0 {
						first = out
					} else if out != first {
						t.Fatalf("-disasm %s printed something else in run %d:\n%s\nfirst run:\n%s", fn, i+1, out, first)
					}
				}
				m := regexp.MustCompile(`(?m)^\s*(\S+)\s+\S+ \(flat, cum\)`).FindStringSubmatch(first)
				if m == nil || !strings.Contains(first, "ROUTINE ======================== "+fn+"\n") {
					t.Fatalf("-disasm %s lists no routine:\n%s", fn, first)
				}
				if got := m[1]; got != want {
					t.Errorf("-disasm %s: flat %s, -top -noinlines says %s", fn, m[1], want)
				}
				for _, p := range pct.FindAllStringSubmatch(first, -1) {
					if v, _ := strconv.ParseFloat(p[1], 64); v > 100 {
						t.Errorf("-disasm %s: %s%% of Total", fn, p[1])
					}
				}
				// The source view: the same flat, and instructions of the
				// function itself.
				html := filepath.Join(t.TempDir(), "weblist.html")
				pprofOut("-weblist", fn, "-output", html)
				data, err := os.ReadFile(html)
				if err != nil {
					t.Fatal(err)
				}
				text := htmlText(string(data))
				if !tc.inlined && !regexp.MustCompile(`Total:\s+`+regexp.QuoteMeta(want)+`\s`).MatchString(text) {
					t.Errorf("-weblist %s: no \"Total: %s\" header:\n%.3000s", fn, want, text)
				}
				if !regexp.MustCompile(`[0-9a-f]+:\s+(push|mov|sub|test|xor|lea|cmp)`).MatchString(text) {
					t.Errorf("-weblist %s: no instructions:\n%.3000s", fn, text)
				}
			}
			if out := pprofOut("-top", "-symbolize=force"); !strings.Contains(out, "jit_poly") || !strings.Contains(out, "jit_sort_records") {
				t.Errorf("-symbolize=force lost the JIT function names:\n%s", out)
			}
		})
	}
}

// htmlText returns the text of an HTML page, tags removed and entities
// decoded.
func htmlText(s string) string {
	s = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`).ReplaceAllString(s, "")
	return stdhtml.UnescapeString(s)
}

// TestJITDumpMatchesELF reads the jitdump LLVM's own PerfJITEventListener
// wrote for the fresh MCJIT run (generate.sh registers it beside the dump
// listener), and checks every JIT location of the CPU profile symbolized
// from it against llvm-symbolizer on the .elf dump of the same code: the
// function is the outermost frame's (a jitdump has no inline frames) and
// file:line the leaf frame's. This is what proves the +0x40 LLVM adds to
// every line address undone: without it, lines are taken 64 bytes early.
func TestJITDumpMatchesELF(t *testing.T) {
	for _, mr := range mcjitRuns(t) {
		t.Run(mr.name, func(t *testing.T) { testJITDumpMatchesELF(t, mr) })
	}
}

func testJITDumpMatchesELF(t *testing.T, mr mcjitRun) {
	dumpDir := mr.path("jitdump")
	objs, errs := jprofile.Load([]string{mr.jitDir()})
	if len(errs) != 0 {
		t.Fatalf("loading JIT objects: %v", errs)
	}
	p, r := pprofProto(t, mr, "cpu.prof", "-jit_dir", dumpDir)
	if bytes.Contains(r.stderr, []byte("line entries")) {
		t.Errorf("warnings about LLVM's line entries: %s", r.stderr)
	}
	byObj := map[string][]*profile.Location{}
	for _, l := range p.Location {
		if obj, _ := objs.Lookup(l.Address); obj != nil {
			if m := l.Mapping; m == nil || filepath.Dir(m.File) != dumpDir {
				t.Fatalf("JIT address %#x has mapping %+v, want the jitdump of %s", l.Address, m, dumpDir)
			}
			byObj[obj.Path] = append(byObj[obj.Path], l)
		}
	}
	n := 0
	for obj, locs := range byObj {
		addrs := make([]uint64, len(locs))
		for i, l := range locs {
			addrs[i] = l.Address
		}
		want := testenv.LLVMSymbolize(t, obj, addrs)
		for i, l := range locs {
			if len(want[i]) == 0 {
				continue
			}
			leaf, outer := want[i][0], want[i][len(want[i])-1]
			w := fmt.Sprintf("%s %s:%d", outer.Func, leaf.File, leaf.Line)
			if got := describeLines(l.Line); len(got) != 1 || got[0] != w {
				t.Errorf("%#x: jitdump gives %q, the .elf %q", l.Address, got, w)
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("only %d JIT locations compared", n)
	}
	t.Logf("%d JIT locations: jitdump frames equal the .elf's", n)

	// Without -jit_dir, the dump is found where LLVM writes it:
	// $HOME/.debug/jit/llvm-IR-jit-*/.
	home := t.TempDir()
	llvmDir := filepath.Join(home, ".debug", "jit", "llvm-IR-jit-20261125-abcd")
	if err := os.MkdirAll(llvmDir, 0o755); err != nil {
		t.Fatal(err)
	}
	dumps, _ := filepath.Glob(filepath.Join(dumpDir, "jit-*.dump"))
	if len(dumps) != 1 {
		t.Fatalf("jitdumps in %s: %q", dumpDir, dumps)
	}
	if err := os.Symlink(dumps[0], filepath.Join(llvmDir, filepath.Base(dumps[0]))); err != nil {
		t.Fatal(err)
	}
	r2 := runPProf(t, t.TempDir(), append(mr.env(), "HOME="+home), "-top", mr.path("cpu.prof"))
	if !strings.Contains(string(r2.stderr), "JIT objects: using 1 from "+llvmDir) || !strings.Contains(string(r2.stdout), "jit_poly") {
		t.Errorf("the jitdump under $HOME/.debug/jit was not used:\n%s\n%s", r2.stderr, r2.stdout)
	}
}

// TestHintForgottenJITDir: without -jit_dir, the MCJIT profile's JIT code
// stays unsymbolized, and pprof says how much and where the JIT files
// are (a subdirectory of the profile's); with it, nothing is said.
func TestHintForgottenJITDir(t *testing.T) {
	mr := mcjitRuns(t)[0]
	r := runPProf(t, t.TempDir(), mr.env(), "-top", mr.path("cpu.prof"))
	hint := regexp.MustCompile(`(\d+\.\d)% of the samples are in anonymous executable memory .*-jit_dir=` + regexp.QuoteMeta(mr.jitDir()))
	m := hint.FindStringSubmatch(string(r.stderr))
	if m == nil {
		t.Fatalf("no hint naming %s:\n%s", mr.jitDir(), r.stderr)
	}
	if v, _ := strconv.ParseFloat(m[1], 64); v < 50 {
		t.Errorf("hint says %s%%, the JIT code is most of this profile", m[1])
	}
	r = runPProf(t, t.TempDir(), mr.env(), "-top", "-jit_dir", mr.jitDir(), mr.path("cpu.prof"))
	if strings.Contains(string(r.stderr), "anonymous executable memory") {
		t.Errorf("hint given although the JIT objects were used:\n%s", r.stderr)
	}
}
