package disasm

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMIPSRandomAgainstObjdump decodes random MIPS words (a fixed seed;
// the SPECIAL, REGIMM, COP1, COP1X, SPECIAL2 and SPECIAL3 groups drawn
// more often than their share) with DecodeMIPS and compares each with
// GNU objdump's text for MIPS64 release 2: big-endian with o32's register
// names, little-endian with n64's. Left out are the application-specific
// extensions objdump also decodes (MSA, EVA, MIPS-3D, the MCU ASE, UDI)
// and jalx, which switches to microMIPS.
func TestMIPSRandomAgainstObjdump(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tool string
		bo         binary.ByteOrder
		n64        bool
		seed       uint64
	}{
		{"o32 big-endian", "mips-linux-gnu-objdump", binary.BigEndian, false, 1},
		{"n64 little-endian", "mips64el-linux-gnuabi64-objdump", binary.LittleEndian, true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objdump := crossObjdump(strings.TrimSuffix(tt.tool, "-objdump"))(t)
			rng := rand.New(rand.NewPCG(tt.seed, 9))
			var code []byte
			for range 40000 {
				x := rng.Uint32()
				switch rng.IntN(4) {
				case 0:
					x &^= 0xfc000000 // SPECIAL
				case 1:
					x = x&0x03ffffff | []uint32{1, 17, 19, 28, 31}[rng.IntN(5)]<<26
				}
				var w [4]byte
				tt.bo.PutUint32(w[:], x)
				code = append(code, w[:]...)
			}
			bin := filepath.Join(t.TempDir(), "code.bin")
			if err := os.WriteFile(bin, code, 0o644); err != nil {
				t.Fatal(err)
			}
			endian, names := "-EL", "gpr-names=32"
			if tt.bo == binary.BigEndian {
				endian = "-EB"
			}
			if tt.n64 {
				names = "gpr-names=64"
			}
			want := runObjdump(t, objdump, bin, 0, 0, "-b", "binary", "-m", "mips:isa64r2", endian, "-M", names, "-D")
			got := DecodeMIPS(code, 0, tt.bo, tt.n64, nil)
			if rate := agreeWithObjdump(t, want, got, mipsOutOfScope); rate != 1 {
				t.Errorf("agreement %.4f, want all of the base ISA", rate)
			}
		})
	}
}

// mipsOutOfScope reports whether objdump's text is of an instruction of
// an application-specific extension (DSP, MSA, MDMX, MT, MIPS-3D, EVA,
// the MCU ASE, UDI), of coprocessor 0 or 2, or jalx.
func mipsOutOfScope(text string) bool {
	mnem, ops, _ := strings.Cut(text, " ")
	if strings.Contains(ops, "$ac") || strings.Contains(ops, "$w") {
		return true // DSP accumulators, MSA vector registers
	}
	if base, _, dotted := strings.Cut(mnem, "."); dotted && mnem != ".word" {
		last := mnem[strings.LastIndexByte(mnem, '.')+1:]
		if !mipsFPOps[base] || !map[string]bool{"s": true, "d": true, "ps": true, "w": true, "l": true, "hb": true}[last] {
			return true // DSP's addq.ph, MSA's ld.h, ...
		}
	}
	for _, p := range []string{"udi", "bc1any", "bc2", "cabs.", "recip2.", "rsqrt2.", "shll", "shra", "shrl", "precr", "prepend", "append", "balign", "bposge"} {
		if strings.HasPrefix(mnem, p) {
			return true
		}
	}
	switch mnem {
	case "jalx", "aset", "aclr", "alnv.ps", "dlsa", "lsa", "wait", "fork", "yield", "mttr", "mftr", "dmfgc0", "mfhc2", "mthc2", "c2",
		"lwx", "ldx", "lhx", "lbux", "addsc", "addwc", "modsub", "bitrev", "insv", "dinsv", "wrdsp", "rddsp", "mthlip", "shilo", "shilov",
		"pll.ps", "plu.ps", "pul.ps", "puu.ps", "addr.ps", "mulr.ps",
		"lbe", "lbue", "lhe", "lhue", "lwe", "lle", "lwle", "lwre", "sbe", "she", "swe", "sce", "swle", "swre", "prefe", "cachee":
		return true
	}
	return false
}

// mipsFPOps are the base names of the floating-point instructions of
// MIPS64 release 2 that have a format suffix (add.d, c.eq.s, cvt.s.w).
var mipsFPOps = map[string]bool{
	"add": true, "sub": true, "mul": true, "div": true, "sqrt": true, "abs": true, "mov": true, "neg": true,
	"round": true, "trunc": true, "ceil": true, "floor": true, "movf": true, "movt": true, "movz": true, "movn": true,
	"recip": true, "rsqrt": true, "cvt": true, "c": true, "madd": true, "msub": true, "nmadd": true, "nmsub": true,
	"jr": true, "jalr": true,
}
