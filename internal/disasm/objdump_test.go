package disasm

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/plt"
)

// objdumpInst is one instruction objdump printed.
type objdumpInst struct {
	addr uint64
	text string
}

// runObjdump disassembles the executable sections of file with tool
// (objdump's options as upstream pprof passes them, plus extra) between
// start and stop (0 for all) and returns the instructions in output order.
func runObjdump(t testing.TB, tool, file string, start, stop uint64, extra ...string) []objdumpInst {
	t.Helper()
	args := []string{"-d", "--no-show-raw-insn"}
	if stop != 0 {
		args = append(args, fmt.Sprintf("--start-address=%#x", start), fmt.Sprintf("--stop-address=%#x", stop))
	}
	args = append(args, extra...)
	args = append(args, file)
	cmd := exec.Command(tool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.Bytes())
	}
	var insts []objdumpInst
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// "  401126:\tcall   401000 <foo>", the form upstream's
		// objdumpAsmOutputRE accepts.
		colon := strings.Index(line, ":\t")
		if colon < 0 || !strings.HasPrefix(line, " ") {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSpace(line[:colon]), 16, 64)
		if err != nil {
			continue
		}
		insts = append(insts, objdumpInst{addr: a, text: line[colon+2:]})
	}
	return insts
}

// elfSymbols is a Symbolizer over an ELF file's symbol tables that picks
// names as objdump does for branch targets: the closest symbol at or
// below the address in the same section, preferring global to local
// names and the first listed among equals.
type elfSymbols struct {
	syms []elfSym
}

type elfSym struct {
	addr   uint64
	sect   elf.SectionIndex
	name   string
	global bool
}

func newELFSymbols(f *elf.File) *elfSymbols {
	var all []elf.Symbol
	if s, err := f.Symbols(); err == nil {
		all = append(all, s...)
	}
	if len(all) == 0 {
		if s, err := f.DynamicSymbols(); err == nil {
			all = append(all, s...)
		}
	}
	es := &elfSymbols{}
	for _, s := range all {
		typ := elf.ST_TYPE(s.Info)
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || s.Name == "" {
			continue
		}
		if typ != elf.STT_FUNC && typ != elf.STT_OBJECT && typ != elf.STT_NOTYPE && typ != elf.STT_GNU_IFUNC && typ != elf.STT_TLS {
			continue
		}
		if elfrel.MarkerSymbol(f.Machine, s.Name) || strings.HasPrefix(s.Name, ".L") {
			continue // mapping symbols and local labels
		}
		name := s.Name
		if s.HasVersion && s.Version != "" && s.Library == "" {
			// objdump names defined versioned symbols "name@@VERSION"
			// ("@" for a hidden, non-default version).
			sep := "@@"
			if s.VersionIndex.IsHidden() {
				sep = "@"
			}
			name += sep + s.Version
		}
		addr := s.Value
		if f.Machine == elf.EM_ARM && (typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC) {
			addr &^= 1 // the Thumb bit
		}
		if f.Type == elf.ET_REL && int(s.Section) < len(f.Sections) {
			// In a relocatable object (a JIT object) symbol values are
			// offsets in their section, which has its load address.
			addr += f.Sections[s.Section].Addr
		}
		es.syms = append(es.syms, elfSym{addr: addr, sect: s.Section, name: name, global: elf.ST_BIND(s.Info) != elf.STB_LOCAL})
	}
	// objdump's synthetic "name@plt" symbols of the PLT stubs.
	for _, e := range plt.Entries(plt.FromStd(f)) {
		es.syms = append(es.syms, elfSym{addr: e.Addr, name: e.Symbol + "@plt", global: true})
	}
	sort.SliceStable(es.syms, func(i, j int) bool {
		a, b := es.syms[i], es.syms[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.global && !b.global
	})
	return es
}

// lookup implements Symbolizer.
func (es *elfSymbols) lookup(addr uint64) (string, uint64, bool) {
	i := sort.Search(len(es.syms), func(i int) bool { return es.syms[i].addr > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	a := es.syms[i].addr
	for i > 0 && es.syms[i-1].addr == a {
		i--
	}
	return es.syms[i].name, a, true
}

// starts returns the symbol addresses in [lo, hi), sorted, deduplicated.
func (es *elfSymbols) starts(lo, hi uint64) []uint64 {
	var out []uint64
	for _, s := range es.syms {
		if s.addr >= lo && s.addr < hi && (len(out) == 0 || out[len(out)-1] != s.addr) {
			out = append(out, s.addr)
		}
	}
	return out
}

// agreement is the result of comparing our text with objdump's.
type agreement struct {
	total, same, sameNoSym, missing int
	// diffs counts each difference class, with one example each.
	diffs    map[string]int
	examples map[string]string
}

func (a *agreement) rate() float64      { return float64(a.same) / float64(max(a.total, 1)) }
func (a *agreement) rateNoSym() float64 { return float64(a.sameNoSym) / float64(max(a.total, 1)) }

func (a *agreement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d instructions, %.4f%% identical, %.4f%% identical ignoring <symbol> annotations, %d not decoded at objdump's address\n",
		a.total, 100*a.rate(), 100*a.rateNoSym(), a.missing)
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range a.diffs {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v || kvs[i].v == kvs[j].v && kvs[i].k < kvs[j].k })
	for i, e := range kvs {
		if i == 40 {
			break
		}
		fmt.Fprintf(&b, "  %7d  %-12s %s\n", e.v, e.k, a.examples[e.k])
	}
	return b.String()
}

// normalize collapses runs of white space and trims the ends.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// stripSym removes "<...>" annotations (in parentheses too, and before
// AArch64's condition comment, "b.eq 33648 <f+0x48> // b.none") and
// objdump's "# addr" comments.
func stripSym(s string) string {
	if i := strings.Index(s, " # "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "> // "); i >= 0 {
		if j := strings.LastIndex(s[:i], " <"); j >= 0 {
			s = s[:j] + s[i+1:]
		}
	}
	if i := strings.Index(s, " <"); i >= 0 && strings.HasSuffix(s, ">") {
		s = s[:i]
	} else if i >= 0 && strings.HasSuffix(s, ">)") {
		s = s[:i] + ")" // ARM's "@ (2804c <sym+0x3c>)"
	}
	return s
}

// compare decodes the executable sections of the ELF file path between
// start and stop (0: everything) symbol by symbol, as objdump does, and
// compares each instruction with objdump's text at the same address.
func compare(t testing.TB, tool, path string, start, stop uint64, intel bool) *agreement {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var extra []string
	if intel {
		extra = append(extra, "-M", "intel")
	}
	want := runObjdump(t, tool, path, start, stop, extra...)
	syms := newELFSymbols(f)
	got := map[uint64]string{}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS {
			continue
		}
		lo, hi := s.Addr, s.Addr+s.Size
		if stop != 0 {
			lo, hi = max(lo, start), min(hi, stop)
		}
		if lo >= hi {
			continue
		}
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		// objdump restarts decoding at every symbol, and at ARM's
		// mapping symbols, which it decodes as the object tool does.
		cuts := append([]uint64{lo}, syms.starts(lo+1, hi)...)
		kinds := armKinds(f, s)
		kind, last := byte('a'), uint64(0)
		for a, k := range kinds {
			if a > lo && a < hi {
				cuts = append(cuts, a)
			}
			if a <= lo && a >= last {
				kind, last = k, a // the last mark at or before lo
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(append(cuts, hi))
		for i := 0; i+1 < len(cuts); i++ {
			code := data[cuts[i]-s.Addr : cuts[i+1]-s.Addr]
			if k, ok := kinds[cuts[i]]; ok {
				kind = k
			}
			var insts []Inst
			switch {
			case kind == 'd':
				insts = Data(code, cuts[i], f.ByteOrder)
			case kind == 't':
				insts = DecodeThumb(code, cuts[i], syms.lookup)
			case f.Machine == elf.EM_RISCV && f.Class == elf.ELFCLASS32:
				insts = DecodeRV32(code, cuts[i], syms.lookup)
			case f.Machine == elf.EM_MIPS:
				insts = DecodeMIPS(code, cuts[i], f.ByteOrder, f.Class == elf.ELFCLASS64, syms.lookup)
			default:
				if insts, err = Decode(f.Machine, f.ByteOrder, code, cuts[i], intel, syms.lookup); err != nil {
					t.Fatal(err)
				}
			}
			for _, in := range insts {
				got[in.Addr] = in.Text
			}
		}
	}
	a := &agreement{diffs: map[string]int{}, examples: map[string]string{}}
	for _, w := range want {
		a.total++
		g, ok := got[w.addr]
		if !ok {
			a.missing++
			a.diff("missing", fmt.Sprintf("%#x: objdump %q", w.addr, w.text))
			continue
		}
		gn, wn := normalize(g), normalize(w.text)
		if gn == wn {
			a.same++
			a.sameNoSym++
			continue
		}
		if stripSym(gn) == stripSym(wn) {
			a.sameNoSym++
			a.diff(symbolClass(gn, wn), fmt.Sprintf("%#x: got %q, want %q", w.addr, gn, wn))
			continue
		}
		gm, _, _ := strings.Cut(gn, " ")
		wm, _, _ := strings.Cut(wn, " ")
		a.diff(wm+"/"+gm, fmt.Sprintf("%#x: got %q, want %q", w.addr, gn, wn))
	}
	return a
}

// armKinds returns, for a 32-bit ARM file, where the mapping symbols of
// section s start ARM code ('a'), Thumb code ('t') and data ('d'); in a
// section without them (a stripped library, whose dynamic symbols are
// all there is), where each function starts, 't' for those with the
// Thumb bit, as objdump decides. nil for other machines.
func armKinds(f *elf.File, s *elf.Section) map[uint64]byte {
	if f.Machine != elf.EM_ARM {
		return nil
	}
	syms, _ := f.Symbols()
	if len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	marks, funcs := map[uint64]byte{}, map[uint64]byte{}
	for _, sym := range syms {
		if int(sym.Section) >= len(f.Sections) || f.Sections[sym.Section] != s {
			continue
		}
		addr := sym.Value
		if f.Type == elf.ET_REL {
			addr += s.Addr
		}
		n := sym.Name
		switch {
		case len(n) >= 2 && n[0] == '$' && (len(n) == 2 || n[2] == '.') && strings.IndexByte("atd", n[1]) >= 0:
			marks[addr] = n[1]
		case !isFunc(sym):
		case addr&1 != 0:
			funcs[addr-1] = 't'
		default:
			funcs[addr] = 'a'
		}
	}
	if len(marks) == 0 {
		return funcs
	}
	return marks
}

// isFunc reports whether sym is a function's (an indirect one's too).
func isFunc(sym elf.Symbol) bool {
	t := elf.ST_TYPE(sym.Info)
	return t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC
}

func (a *agreement) diff(class, example string) {
	a.diffs[class]++
	if _, ok := a.examples[class]; !ok {
		a.examples[class] = example
	}
}

// symbolClass names the kind of a difference in <symbol> annotations
// only: a name we did not give, one objdump did not give, or another
// name (objdump picks among aliases and section symbols by its own rules).
func symbolClass(got, want string) string {
	gs, ws := strings.Contains(got, "<"), strings.Contains(want, "<")
	switch {
	case !gs && ws:
		return "symbol:none"
	case gs && !ws:
		return "symbol:extra"
	}
	return "symbol:other"
}
