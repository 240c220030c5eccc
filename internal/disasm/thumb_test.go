package disasm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestThumbRandomAgainstObjdump assembles random Thumb encodings (with
// GNU as's .inst.n and .inst.w, a fixed seed, every group of the
// encoding tables drawn equally often) and compares DecodeThumb's text
// for each with arm-linux-gnueabihf-objdump's. The encodings cover what
// compilers do not emit too, unpredictable and reserved ones included,
// so a few classes differ (listed in doc/disasm.md); the threshold is
// just under the measured rate. The encodings objdump reads as Advanced
// SIMD instructions, which DecodeThumb does not decode, are left out.
func TestThumbRandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	as := testenv.Tool(t, "arm-linux-gnueabihf-as", "binutils-arm-linux-gnueabihf")
	objdump := testenv.Tool(t, "arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf")
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 40000
	var src strings.Builder
	src.WriteString("\t.syntax unified\n\t.thumb\n\t.text\nf:\n")
	var code []byte
	for range n {
		if rng.IntN(3) == 0 {
			hw := uint16(rng.Uint32N(0xe800))
			fmt.Fprintf(&src, "\t.inst.n 0x%04x\n", hw)
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
		fmt.Fprintf(&src, "\t.inst.w 0x%08x\n", x)
		code = append(code, byte(x>>16), byte(x>>24), byte(x), byte(x>>8))
	}
	dir := t.TempDir()
	s, o := filepath.Join(dir, "t.s"), filepath.Join(dir, "t.o")
	if err := os.WriteFile(s, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-march=armv7-a", "-mfpu=vfpv3-d16", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", as, err, out)
	}
	want := runObjdump(t, objdump, o, 0, 0)
	sym := func(addr uint64) (string, uint64, bool) { return "f", 0, true }
	got := map[uint64]string{}
	for _, in := range DecodeThumb(code, 0, sym) {
		got[in.Addr] = in.Text
	}
	same, total, skipped := 0, 0, 0
	classes := map[string][]string{}
	for _, w := range want {
		wn := normalize(w.text)
		if thumbOutOfScope(wn) {
			skipped++
			continue
		}
		total++
		gn := normalize(got[w.addr])
		if gn == wn {
			same++
			continue
		}
		wm, _, _ := strings.Cut(wn, " ")
		classes[wm] = append(classes[wm], fmt.Sprintf("%#x: got %q, want %q", w.addr, gn, wn))
	}
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(classes[keys[i]]) > len(classes[keys[j]]) })
	for _, k := range keys[:min(len(keys), 40)] {
		t.Logf("%5d %s e.g. %s", len(classes[k]), k, classes[k][0])
	}
	rate := float64(same) / float64(total)
	t.Logf("%d of %d identical (%.4f); %d out of scope", same, total, rate, skipped)
	if rate < 0.99 {
		t.Errorf("agreement %.4f", rate)
	}
}

// thumbOutOfScope reports whether objdump's text (white space collapsed)
// is of an instruction DecodeThumb leaves undecoded by design: Advanced
// SIMD, VFPv4 and ARMv8 floating point, ARMv8-M security and load-acquire
// instructions; or of an encoding objdump itself prints as invalid
// (registers past s31 or d31, "<illegal ...>").
func thumbOutOfScope(text string) bool {
	mnem, ops, _ := strings.Cut(text, " ")
	for _, p := range []string{"vfma", "vfms", "vfnm", "vrint", "vdup", "vjcvt", "vcvtb.f64", "vcvtt.f64", "vcvtb.f16.f64", "vcvtt.f16.f64", "vscclrm", "vsel", "vmaxnm", "vminnm", "vcvta", "vcvtn", "vcvtp", "vcvtm", "vins", "vmovx", "clrm", "blxns", "bxns", "stl", "lda", "vldr.16", "vstr.16", "fldm", "fstm"} {
		if strings.HasPrefix(mnem, p) {
			return true
		}
	}
	if strings.HasPrefix(mnem, "vmov.") && strings.Contains(ops, "[") {
		return true // a NEON scalar
	}
	if strings.Contains(mnem, ".f16") || strings.Contains(mnem, ".i") || strings.Contains(mnem, ".s8") || strings.Contains(mnem, ".u8") || strings.Contains(mnem, ".s16") || strings.Contains(mnem, ".u16") || strings.Contains(mnem, ".s64") || strings.Contains(mnem, ".u64") || strings.Contains(mnem, ".8") || strings.Contains(mnem, ".16") || strings.Contains(mnem, ".64") && !strings.HasSuffix(mnem, ".f64") || strings.Contains(mnem, ".p") {
		return true
	}
	if strings.Contains(text, "<illegal") || strings.Contains(text, "<overflow") || strings.Contains(text, "<invalid") || strings.Contains(text, " q") {
		return true
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
