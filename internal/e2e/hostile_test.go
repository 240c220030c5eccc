package e2e

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// A hostileCase is one broken or malicious input, written into the JIT
// directory beside the real MCJIT objects (or replacing the profile).
type hostileCase struct {
	name  string
	file  string // its name in the directory
	write func(t *testing.T, path string)
	// profile reports that the case replaces the profile itself, so that
	// pprof must fail cleanly instead of symbolizing the rest.
	profile bool
	// sample adds a sample at hostileText to the profile, so that the JIT
	// object written there is indexed.
	sample bool
	// wantErr, if set, must appear on stderr.
	wantErr string
	// maxRSS, if set, replaces the usual bound on peak RSS.
	maxRSS int64
}

// TestHostileCorpus runs pprof on well over a hundred generated hostile
// inputs: truncated and corrupted ELF objects (headers, section tables,
// relocations, DWARF), .meta files, perf maps, jitdumps, profiles, and
// special files named like JIT files. Each run must take at most 10 s of
// CPU time and end within 60 s, with peak RSS at most max(256 MiB, 4x the input's size), and either a clear
// warning naming the file with the rest of the profile symbolized (the
// real objects' JIT functions), or, for a broken profile, a clean error.
func TestHostileCorpus(t *testing.T) {
	mr := mcjitRuns(t)[0]
	if _, err := os.Stat(timeTool); err != nil {
		testenv.Missing(t, timeTool, "apt-get install time")
	}
	goodObjs, _ := filepath.Glob(filepath.Join(mr.jitDir(), "*.elf"))
	if len(goodObjs) == 0 {
		t.Fatal("no MCJIT objects")
	}
	elfData, err := os.ReadFile(goodObjs[0])
	if err != nil {
		t.Fatal(err)
	}
	metaData, _ := os.ReadFile(strings.TrimSuffix(goodObjs[0], ".elf") + ".meta")
	profData, err := os.ReadFile(mr.path("cpu.prof"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	bo := binary.LittleEndian
	var cases []hostileCase
	writeBytes := func(b []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	add := func(name, file string, b []byte) {
		cases = append(cases, hostileCase{name: name, file: file, write: writeBytes(b)})
	}

	// ELF objects: truncations, random byte flips, header fields.
	for i := 1; i <= 12; i++ {
		add(fmt.Sprintf("elf truncated to %d/12", i), "evil.elf", elfData[:len(elfData)*i/13])
	}
	for i := range 24 {
		b := bytes.Clone(elfData)
		for range 8 {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		add(fmt.Sprintf("elf with random bytes %d", i), "evil.elf", b)
	}
	shoff := bo.Uint64(elfData[40:])
	shnum := int(bo.Uint16(elfData[60:]))
	for _, f := range []struct {
		name string
		at   int // offset in each section header
		val  uint64
	}{
		{"sh_size huge", 32, 1 << 62},
		{"sh_offset past the end", 24, 1 << 40},
		{"sh_addr top of memory", 16, ^uint64(0) - 16},
		{"sh_link out of range", 40, 0xffff},
		{"sh_info out of range", 44, 0xffff},
		{"sh_type NOBITS", 4, uint64(9 /* NOBITS... as type 8 */)},
	} {
		for k := 1; k < shnum && k < 6; k++ {
			b := bytes.Clone(elfData)
			off := int(shoff) + k*64 + f.at
			if f.at == 40 || f.at == 44 || f.at == 4 {
				bo.PutUint32(b[off:], uint32(f.val))
			} else {
				bo.PutUint64(b[off:], f.val)
			}
			add(fmt.Sprintf("elf section %d %s", k, f.name), "evil.elf", b)
		}
	}
	for _, h := range []struct {
		name string
		off  int
		val  uint16
	}{{"e_shnum huge", 60, 0xffff}, {"e_shstrndx out of range", 62, 0xfffe}, {"e_phnum with no table", 56, 40}, {"e_shentsize", 58, 12}} {
		b := bytes.Clone(elfData)
		bo.PutUint16(b[h.off:], h.val)
		add("elf header "+h.name, "evil.elf", b)
	}

	// A sparse file: .debug_info claims 3 GB that are a hole. Whatever
	// reads it whole runs out of memory.
	if ef, err := elf.NewFile(bytes.NewReader(elfData)); err == nil {
		if sec := ef.Section(".debug_info"); sec != nil {
			k := slices.Index(ef.Sections, sec)
			cases = append(cases, hostileCase{name: "sparse elf with a 3 GB .debug_info", file: "evil.elf", write: func(t *testing.T, path string) {
				b := bytes.Clone(elfData)
				const at, claim = 1 << 20, 3 << 30
				bo.PutUint64(b[int(shoff)+k*64+24:], at)
				bo.PutUint64(b[int(shoff)+k*64+32:], claim)
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(path, at+claim); err != nil {
					t.Fatal(err)
				}
			}, wantErr: "are holes of a sparse file"})
		}
	}

	// .meta files beside a good copy of the object.
	metas := map[string]string{
		"truncated":     string(metaData[:len(metaData)/2]),
		"not JSON":      "\x00\x01garbage",
		"huge numbers":  `{"sections":[{"name":".text","start":1e300,"size":-5}]}`,
		"deep nesting":  strings.Repeat("[", 100000),
		"wrong types":   `{"sections":"no"}`,
		"contradicts":   `{"sections":[{"name":".text","start":4096,"size":4096}]}`,
		"control chars": "{\"sections\":[{\"name\":\"\\u001b[2J\",\"start\":4096,\"size\":1}]}",
		"long name":     `{"sections":[{"name":"` + strings.Repeat("x", 1<<20) + `","start":4096,"size":1}]}`,
		"empty":         "",
		"many sections": `{"sections":[` + strings.Repeat(`{"name":"a","start":1,"size":1},`, 100000) + `{"name":"a","start":1,"size":1}]}`,
	}
	for name, m := range metas {
		m := m
		cases = append(cases, hostileCase{name: "meta " + name, file: "evil.meta", write: func(t *testing.T, path string) {
			writeBytes(elfData)(t, strings.TrimSuffix(path, ".meta")+".elf")
			writeBytes([]byte(m))(t, path)
		}})
	}

	// Perf maps.
	maps := map[string]string{
		"binary garbage": string(bytes.Repeat([]byte{0, 0xff, 0x80, '\n'}, 10000)),
		"huge sizes":     "4ffffffff000 ffffffffffffffff x\n",
		"wrapping":       "ffffffffffffff00 1000 wraps\n",
		"long line":      "4ffffffff000 10 " + strings.Repeat("n", 1<<20) + "\n",
		"many overlaps":  strings.Repeat("4ffffffff000 1000 same\n", 100000),
		"nested": func() string {
			var b strings.Builder
			for i := range 20000 {
				fmt.Fprintf(&b, "%x %x n%d\n", 0x4ffffffff000+i, 0x100000-2*i, i)
			}
			return b.String()
		}(),
		"control chars": "4ffffffff000 10 \x1b]0;pwned\x07\n",
		"over the JIT":  "4ffffffff000 1000 not_the_jit\n",
	}
	for name, m := range maps {
		add("perf map "+name, "perf-1.map", []byte(m))
	}

	// jitdumps.
	dump := func(records ...[]byte) []byte {
		var b bytes.Buffer
		for _, v := range []any{uint32(0x4A695444), uint32(1), uint32(40), uint32(62), uint32(0), uint32(1), uint64(0), uint64(0)} {
			binary.Write(&b, bo, v)
		}
		for _, r := range records {
			b.Write(r)
		}
		return b.Bytes()
	}
	rec := func(id, size uint32, body []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, bo, id)
		binary.Write(&b, bo, size)
		binary.Write(&b, bo, uint64(0))
		b.Write(body)
		return b.Bytes()
	}
	add("jitdump header only", "jit-1.dump", dump())
	add("jitdump record claims 4 GiB", "jit-1.dump", dump(rec(0, 0xffffffff, make([]byte, 64))))
	add("jitdump record size 0", "jit-1.dump", dump(rec(0, 0, nil)))
	add("jitdump unknown records", "jit-1.dump", dump(bytes.Repeat(rec(77, 24, make([]byte, 8)), 1000)))
	add("jitdump debug info counts 2^60 lines", "jit-1.dump", dump(rec(2, 32, append(make([]byte, 8), 0, 0, 0, 0, 0, 0, 0, 0x10))))
	add("jitdump random", "jit-1.dump", dump(func() []byte {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}()))
	add("jitdump wrong magic", "jit-1.dump", []byte("DTiJ-not-really-a-dump"))
	add("jitdump truncated header", "jit-1.dump", dump()[:20])

	// Special files named like JIT files.
	cases = append(cases,
		hostileCase{name: "FIFO named .elf", file: "fifo.elf", write: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip(err)
			}
		}},
		hostileCase{name: "directory named .elf", file: "dir.elf", write: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }},
		hostileCase{name: "symlink loop named .elf", file: "loop.elf", write: func(t *testing.T, path string) { os.Symlink(path, path) }},
		hostileCase{name: "/dev/zero named .elf", file: "zero.elf", write: func(t *testing.T, path string) { os.Symlink("/dev/zero", path) }},
		hostileCase{name: "FIFO named perf map", file: "perf-2.map", write: func(t *testing.T, path string) { syscall.Mkfifo(path, 0o644) }},
		hostileCase{name: "FIFO named jitdump", file: "jit-2.dump", write: func(t *testing.T, path string) { syscall.Mkfifo(path, 0o644) }},
	)

	// Profiles.
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	for _, p := range []struct {
		name string
		data []byte
	}{
		{"truncated", profData[:len(profData)/3]},
		{"gzip of garbage", gz(bytes.Repeat([]byte{0xff}, 1<<16))},
		{"gzip bomb", gz(make([]byte, 300<<20))},
		{"truncated gzip", gz(profData)[:100]},
		{"random", func() []byte {
			b := make([]byte, 1<<16)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}()},
		{"empty", nil},
	} {
		cases = append(cases, hostileCase{name: "profile " + p.name, file: "cpu.prof", write: writeBytes(p.data), profile: true})
	}

	cases = append(cases, dwarfCases(elfData)...)
	sampledProf := withSampleAt(t, profData, hostileText+4)

	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	worstTime, worstRSS := time.Duration(0), int64(0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			jit := filepath.Join(dir, "jit")
			os.Mkdir(jit, 0o755)
			for _, g := range goodObjs {
				os.Symlink(g, filepath.Join(jit, filepath.Base(g)))
				os.Symlink(strings.TrimSuffix(g, ".elf")+".meta", filepath.Join(jit, filepath.Base(strings.TrimSuffix(g, ".elf")+".meta")))
			}
			prof := filepath.Join(dir, "cpu.prof")
			target := filepath.Join(jit, tc.file)
			if tc.profile {
				target = prof
			} else if err := os.WriteFile(prof, map[bool][]byte{false: profData, true: sampledProf}[tc.sample], 0o644); err != nil {
				t.Fatal(err)
			}
			tc.write(t, target)
			// What the input really holds: a sparse file's holes do not
			// count.
			var inputBytes int64
			if st, err := os.Lstat(target); err == nil && st.Mode().IsRegular() {
				inputBytes = st.Size()
				if n, ok := regfile.Allocated(st); ok {
					inputBytes = min(inputBytes, n)
				}
			}
			// 10 s of CPU time; the wall time only catches a hang (on a
			// loaded machine a run waits for a CPU much of its time).
			m := runMeasured(t, dir, mr.env(), 60*time.Second, "-top", "-jit_dir", jit, prof)
			if m.timeout {
				t.Fatal("did not end within 60s")
			}
			if m.rss == 0 {
				t.Fatal("no peak RSS from /usr/bin/time")
			}
			if m.cpu > 10*time.Second {
				t.Errorf("took %v of CPU time, over 10s", m.cpu)
			}
			r, rss, elapsed := m.result, m.rss, m.cpu
			t.Logf("%v of CPU time (%v of wall time), peak RSS %d MiB", m.cpu.Round(time.Millisecond), m.elapsed.Round(time.Millisecond), m.rss>>20)
			limit := max(256<<20, 4*inputBytes)
			if tc.maxRSS != 0 {
				limit = tc.maxRSS
			}
			if rss > limit {
				t.Errorf("peak RSS %d MiB, over %d MiB", rss>>20, limit>>20)
			}
			worstTime, worstRSS = max(worstTime, elapsed), max(worstRSS, rss)
			if strings.Contains(string(r.stderr), "panic") || strings.Contains(string(r.stderr), "goroutine ") {
				t.Fatalf("panic:\n%.3000s", r.stderr)
			}
			if tc.profile {
				if r.err == nil && !bytes.Contains(r.stdout, []byte("jit_")) {
					t.Errorf("a broken profile neither failed nor reported:\n%s\n%s", r.stdout, r.stderr)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("pprof failed: %v\n%.2000s", r.err, r.stderr)
			}
			for _, fn := range []string{"jit_sort_records", "jit_tree_sum"} {
				if !bytes.Contains(r.stdout, []byte(fn)) {
					t.Errorf("%s lost: the rest of the profile must stay symbolized\n%.3000s\n%.2000s", fn, r.stdout, r.stderr)
				}
			}
			if tc.wantErr != "" && !bytes.Contains(r.stderr, []byte(tc.wantErr)) {
				t.Errorf("stderr does not say %q:\n%.2000s", tc.wantErr, r.stderr)
			}
			if bytes.ContainsAny(r.stderr, "\x1b\x07") {
				t.Errorf("control characters reached stderr: %q", r.stderr)
			}
		})
	}
	t.Logf("%d cases; worst CPU time %v, worst peak RSS %d MiB", len(cases), worstTime.Round(time.Millisecond), worstRSS>>20)
}
