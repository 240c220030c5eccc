package disasm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestThumbRandomAgainstObjdump assembles random Thumb encodings (with
// GNU as's .inst.n and .inst.w, a fixed seed, every group of the
// encoding tables drawn) and compares DecodeThumb's text for each with
// arm-linux-gnueabihf-objdump's. The encodings cover what compilers do
// not emit too, unpredictable and reserved ones included, so a few
// classes differ (listed in doc/disasm.md); the threshold is just under
// the measured rate. Left out are what thumbOutOfScope lists.
func TestThumbRandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	var lines []string
	var code []byte
	for range 40000 {
		if rng.IntN(3) == 0 {
			hw := uint16(rng.Uint32N(0xe800))
			lines = append(lines, fmt.Sprintf(".inst.n 0x%04x", hw))
			code = append(code, byte(hw), byte(hw>>8))
			continue
		}
		x := rng.Uint32()&0x07ffffff | 0xe8000000
		if (x>>27 == 0x1d || x>>27 == 0x1f) && x>>26&1 == 1 {
			// The coprocessor space: VFP only (coprocessors 10 and 11,
			// first halfword 0xec to 0xee).
			x = x&^0xf1000f00 | 0xec000a00 | rng.Uint32N(2)<<8
			if x>>24 == 0xef {
				x &^= 0x01000000
			}
		}
		lines = append(lines, fmt.Sprintf(".inst.w 0x%08x", x))
		code = append(code, byte(x>>16), byte(x>>24), byte(x), byte(x>>8))
	}
	sym := func(addr uint64) (string, uint64, bool) { return "f", 0, true }
	if rate := randomAgainstObjdump(t, ".thumb", lines, DecodeThumb(code, 0, sym), thumbOutOfScope); rate < 0.99 {
		t.Errorf("agreement %.4f", rate)
	}
}

// TestNEONRandomAgainstObjdump assembles random Advanced SIMD encodings
// in ARM mode (data processing, element and structure loads and stores,
// the moves between core registers and scalars) and compares the text of
// each with objdump's, as TestThumbRandomAgainstObjdump does for Thumb
// (whose NEON instructions are the same bits under another prefix, which
// that test draws too). Left out: what objdump decodes as ARMv8 (vmaxnm,
// the crypto instructions, ...) and encodings it prints as invalid.
func TestNEONRandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 13))
	var lines []string
	var code []byte
	for range 30000 {
		var x uint32
		switch rng.IntN(4) {
		case 0, 1:
			x = 0xf2000000 | rng.Uint32()&0x01ffffff
		case 2:
			x = 0xf4000000 | rng.Uint32()&0x00efffff
		default:
			x = 0xee000b10 | rng.Uint32()&0x00ff00e0 | rng.Uint32N(15)<<12
		}
		lines = append(lines, fmt.Sprintf(".inst 0x%08x", x))
		code = append(code, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	if rate := randomAgainstObjdump(t, ".arm", lines, decodeARM(code, 0, nil), neonOutOfScope); rate < 0.999 {
		t.Errorf("agreement %.4f", rate)
	}
}

// randomAgainstObjdump assembles the .inst lines with GNU as for ARMv7
// with NEON, in the instruction set that mode (".arm", ".thumb") sets,
// and compares objdump's text of each instruction with got's at the same
// address, leaving out those outOfScope says. It logs the classes of
// differences, the largest first, and returns the share that agrees.
func randomAgainstObjdump(t *testing.T, mode string, lines []string, got []Inst, outOfScope func(string) bool) float64 {
	t.Helper()
	as := testenv.Tool(t, "arm-linux-gnueabihf-as", "binutils-arm-linux-gnueabihf")
	objdump := testenv.Tool(t, "arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf")
	src := "\t.syntax unified\n\t" + mode + "\n\t.text\nf:\n\t" + strings.Join(lines, "\n\t") + "\n"
	dir := t.TempDir()
	s, o := filepath.Join(dir, "t.s"), filepath.Join(dir, "t.o")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-march=armv7-a", "-mfpu=neon", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", as, err, out)
	}
	return agreeWithObjdump(t, runObjdump(t, objdump, o, 0, 0), got, outOfScope)
}

// agreeWithObjdump compares objdump's text of each instruction (want)
// with got's at the same address, leaving out those outOfScope says. It
// logs the classes of differences, the largest first, and returns the
// share that agrees.
func agreeWithObjdump(t *testing.T, want []objdumpInst, got []Inst, outOfScope func(string) bool) float64 {
	t.Helper()
	texts := map[uint64]string{}
	for _, in := range got {
		texts[in.Addr] = in.Text
	}
	same, total, skipped := 0, 0, 0
	classes := map[string][]string{}
	for _, w := range want {
		wn := normalize(w.text)
		if outOfScope(wn) {
			skipped++
			continue
		}
		total++
		gn := normalize(texts[w.addr])
		if gn == wn {
			same++
			continue
		}
		wm, _, _ := strings.Cut(wn, " ")
		classes[wm] = append(classes[wm], fmt.Sprintf("%#x: got %q, want %q", w.addr, gn, wn))
	}
	keys := slices.SortedFunc(maps.Keys(classes), func(a, b string) int { return len(classes[b]) - len(classes[a]) })
	for _, k := range keys[:min(len(keys), 40)] {
		t.Logf("%5d %s e.g. %s", len(classes[k]), k, classes[k][0])
	}
	rate := float64(same) / float64(max(total, 1))
	t.Logf("%d of %d identical (%.4f); %d out of scope", same, total, rate, skipped)
	return rate
}

// thumbOutOfScope reports whether objdump's text (white space collapsed)
// is of an instruction DecodeThumb leaves undecoded by design: what
// neonOutOfScope lists, VFPv4's and ARMv8's floating point, ARMv8-M's
// security and load-acquire instructions; or of an encoding objdump
// prints as invalid (registers past s31 or d31).
func thumbOutOfScope(text string) bool {
	if neonOutOfScope(text) {
		return true
	}
	mnem, ops, _ := strings.Cut(text, " ")
	if strings.HasPrefix(mnem, "vldm") || strings.HasPrefix(mnem, "vstm") || mnem == "vpush" || mnem == "vpop" {
		// More than 16 doublewords, which the encoding cannot list.
		var lo, hi int
		if n, _ := fmt.Sscanf(ops[strings.Index(ops, "{")+1:], "d%d-d%d", &lo, &hi); n == 2 && hi-lo >= 16 {
			return true
		}
	}
	for _, p := range []string{"vfnm", "vcvtb.f64", "vcvtt.f64", "vcvtb.f16.f64", "vcvtt.f16.f64", "vscclrm", "vlldm", "vlstm", "clrm", "blxns", "bxns", "stl", "lda", "vldr.16", "vstr.16", "fldm", "fstm"} {
		if strings.HasPrefix(mnem, p) {
			return true
		}
	}
	for _, f := range strings.FieldsFunc(ops, func(r rune) bool { return r == ' ' || r == ',' || r == '{' || r == '}' || r == '-' }) {
		if len(f) > 1 && (f[0] == 's' || f[0] == 'd') {
			if n, err := strconv.Atoi(f[1:]); err == nil && n > 31 {
				return true
			}
		}
	}
	return false
}

// neonOutOfScope reports whether objdump's text is of an instruction
// that is not ARMv7's Advanced SIMD (ARMv8's and its extensions'), or of
// an encoding objdump prints as invalid.
func neonOutOfScope(text string) bool {
	mnem, _, _ := strings.Cut(text, " ")
	for _, p := range []string{"vmaxnm", "vminnm", "vrint", "vcvta", "vcvtn", "vcvtp", "vcvtm", "aes", "sha", "vqrdmlah", "vqrdmlsh", "vsdot", "vudot", "vcmla", "vcadd", "vfmal", "vfmsl", "vsmmla", "vummla", "vusmmla", "vusdot", "vsudot", "vbf", "vmmla", "vdot", "vfma", "vfms", "vsel", "vins", "vmovx", "vjcvt", "cdp", "mcr", "mrc", "ldc", "stc", "mcrr", "mrrc"} {
		if strings.HasPrefix(mnem, p) {
			return true
		}
	}
	return strings.Contains(mnem, ".f16") || strings.Contains(mnem, ".bf16") || strings.Contains(mnem, ".p64") ||
		strings.Contains(text, "<illegal") || strings.Contains(text, "<overflow") || strings.Contains(text, "<bad") || strings.Contains(text, "UNDEFINED")
}
