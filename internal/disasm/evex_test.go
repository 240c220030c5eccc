package disasm

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestEVEXBroadcastRandomAgainstObjdump: random EVEX instructions of
// maps 0F and 0F38 with a memory operand and EVEX.b set, read by
// objdump and by Decode, AT&T and Intel: where objdump shows a
// broadcast ("(%rax){1to16}", "DWORD BCST [rax]") and both decode the
// bytes, the texts agree but for the few with an opmask objdump shows
// and x86asm drops (vpsadbw, vaesdec, vpclmulqdq with EVEX.aaa set,
// which the CPU rejects). Those x86asm rejects, objdump shows anyway
// (byte and word elements have no broadcast form).
func TestEVEXBroadcastRandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	objdump := testenv.Tool(t, "objdump", "binutils")
	rng := rand.New(rand.NewPCG(5, 6))
	var code []byte
	for i := range 20000 {
		p0 := byte(rng.Uint32())&0xe0 | 1 // map 0F
		if i%3 == 1 {
			p0 = p0&^3 | 2 // map 0F38
		}
		p1 := byte(rng.Uint32()) | 0x04                             // the bit that is always 1
		p2 := byte(rng.Uint32())&0x0f | 0x10 | byte(rng.IntN(3))<<5 // EVEX.b; 128, 256 or 512 bits
		mrm := byte(rng.Uint32())&0x3f | 0x80                       // memory, 32-bit displacement
		if mrm&7 == 4 {
			mrm = mrm&^7 | 3 // no SIB byte
		}
		code = append(code, 0x62, p0, p1, p2, byte(rng.Uint32()), mrm, 0x10, 0, 0, 0)
	}
	bin := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(bin, code, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, intel := range []bool{false, true} {
		args := []string{"-b", "binary", "-m", "i386:x86-64", "-D"}
		if intel {
			args = append(args, "-M", "intel")
		}
		want := map[uint64]string{}
		for _, w := range runObjdump(t, objdump, bin, 0, 0, args...) {
			want[w.addr] = normalize(w.text)
		}
		insts, err := Decode(62, binary.LittleEndian, code, 0, intel, nil)
		if err != nil {
			t.Fatal(err)
		}
		same, total := 0, 0
		for _, in := range insts {
			w := want[in.Addr]
			if !strings.Contains(w, "{1to") && !strings.Contains(w, " BCST ") || strings.Contains(w, "bad") || in.Text == BadText {
				continue
			}
			total++
			if g := normalize(in.Text); g == w {
				same++
			} else if total-same <= 10 {
				t.Logf("%#x: got %q, want %q", in.Addr, g, w)
			}
		}
		rate := float64(same) / float64(max(total, 1))
		t.Logf("intel=%v: %d of %d broadcasts identical (%.4f)", intel, same, total, rate)
		if total < 300 || rate < 0.97 {
			t.Errorf("intel=%v: %d of %d identical, want at least 300 and 97%%", intel, same, total)
		}
	}
}
