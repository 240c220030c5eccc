package disasm

import (
	"debug/elf"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSVERandomAgainstObjdump: random words of each SVE and SVE2
// encoding the decoder knows (sveForms, sve2Forms) and of the whole SVE
// encoding space, read by aarch64 objdump 2.40 and by Decode: every word
// Decode prints as an instruction, objdump prints the same (reserved
// encodings objdump calls undefined stay undefined here). Words objdump
// decodes and Decode leaves undefined (SME's, SVE2.1's) are counted,
// not failed, but of the whole space's words objdump decodes, Decode
// must decode 98%.
func TestSVERandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	objdump := crossObjdump("aarch64-linux-gnu")(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const perForm = 1500
	var words []uint32
	for _, f := range append(sveForms[:len(sveForms):len(sveForms)], sve2Forms...) {
		for range perForm {
			words = append(words, f.value|rng.Uint32()&^f.mask)
		}
	}
	// And words of the whole SVE space (op0 = 0010), to measure how much
	// of what objdump decodes there Decode does.
	formWords := len(words)
	for range 30000 {
		words = append(words, rng.Uint32()&^0x1e000000|0x04000000)
	}
	insts, want := decodeWordsBoth(t, objdump, words)
	decoded, bad, left := map[string]int{}, 0, map[string]int{}
	spaceKnown, spaceDecoded := 0, 0
	for _, in := range insts {
		got, w := normalize(in.Text), want[in.Addr]
		if int(in.Addr/4) >= formWords && !strings.HasPrefix(w, ".inst") {
			spaceKnown++
			if !strings.HasPrefix(got, ".inst") {
				spaceDecoded++
			}
		}
		if strings.HasPrefix(got, ".inst") {
			if !strings.HasPrefix(w, ".inst") && int(in.Addr/4) < formWords {
				left[strings.Fields(w)[0]]++
			}
			continue
		}
		decoded[strings.Fields(got)[0]]++
		if got != w {
			if bad++; bad <= 40 {
				t.Errorf("%#08x: got %q, objdump %q", words[in.Addr/4], got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d decoded words differ from objdump", bad, len(insts))
	}
	var names []string
	for n := range decoded {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range decoded {
		total += n
	}
	t.Logf("%d words decoded, all as objdump; %d mnemonics: %s", total, len(names), strings.Join(names, " "))
	t.Logf("left undefined where objdump decodes: %v", left)
	share := float64(spaceDecoded) / float64(max(spaceKnown, 1))
	t.Logf("random words of the SVE space: objdump decodes %d, Decode %d of them (%.1f%%)", spaceKnown, spaceDecoded, 100*share)
	if spaceKnown < 15000 || share < 0.98 {
		t.Errorf("Decode decodes %d of the %d random words of the SVE space objdump decodes, want 98%%", spaceDecoded, spaceKnown)
	}
}

// TestPSTATEAgainstObjdump: every word of the MSR (immediate) encoding
// space (op1, CRm, op2), read by aarch64 objdump and by Decode: the
// PSTATE fields ("msr dit, #0x1"), cfinv, xaflag, axflag, smstart,
// smstop and the system register moves objdump shows the rest as.
func TestPSTATEAgainstObjdump(t *testing.T) {
	t.Parallel()
	objdump := crossObjdump("aarch64-linux-gnu")(t)
	var words []uint32
	for op1 := range uint32(8) {
		for crm := range uint32(16) {
			for op2 := range uint32(8) {
				words = append(words, 0xd500401f|op1<<16|crm<<8|op2<<5)
			}
		}
	}
	insts, want := decodeWordsBoth(t, objdump, words)
	bad := 0
	for _, in := range insts {
		if got, w := normalize(in.Text), want[in.Addr]; got != w {
			if bad++; bad <= 20 {
				t.Errorf("%#08x: got %q, objdump %q", words[in.Addr/4], got, w)
			}
		}
	}
	if bad > 0 || len(insts) != len(words) {
		t.Errorf("%d of %d words differ from objdump (%d decoded)", bad, len(words), len(insts))
	}
}

// decodeWordsBoth decodes AArch64 words with Decode and with objdump
// (its normalized text by address).
func decodeWordsBoth(t *testing.T, objdump string, words []uint32) ([]Inst, map[uint64]string) {
	t.Helper()
	code := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(code[4*i:], w)
	}
	bin := filepath.Join(t.TempDir(), "words.bin")
	if err := os.WriteFile(bin, code, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{}
	for _, w := range runObjdump(t, objdump, bin, 0, 0, "-b", "binary", "-m", "aarch64", "-D") {
		want[w.addr] = normalize(w.text)
	}
	insts, err := Decode(elf.EM_AARCH64, binary.LittleEndian, code, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return insts, want
}
