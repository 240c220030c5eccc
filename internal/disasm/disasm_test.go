package disasm

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// syms is a fixed Symbolizer: foo at 0x401000, bar at 0x402000.
func syms(addr uint64) (string, uint64, bool) {
	switch {
	case addr >= 0x402000:
		return "bar", 0x402000, true
	case addr >= 0x401000:
		return "foo", 0x401000, true
	}
	return "", 0, false
}

// decodeTest is one case of TestDecode; cases without a Symbolizer are
// also checked against objdump by TestDecodeTableIsObjdumps.
type decodeTest struct {
	name  string
	m     elf.Machine
	bo    binary.ByteOrder // for PowerPC64; nil is little-endian
	rv32  bool             // EM_RISCV code of a 32-bit file (DecodeRV32)
	thumb bool             // EM_ARM code in the Thumb instruction set (DecodeThumb)
	code  []byte
	addr  uint64
	intel bool
	sym   Symbolizer
	want  []string
	// notObjdump says why objdump prints something else, if it does.
	notObjdump string
}

var decodeTests = []decodeTest{
	{name: "call with symbol", m: elf.EM_X86_64, addr: 0x401010, sym: syms,
		code: []byte{0xe8, 0x01, 0x00, 0x00, 0x00}, want: []string{"call   401016 <foo+0x16>"}},
	{name: "call at symbol start", m: elf.EM_X86_64, addr: 0x401ffb, sym: syms,
		code: []byte{0xe8, 0x00, 0x00, 0x00, 0x00}, want: []string{"call   402000 <bar>"}},
	{name: "call without symbolizer", m: elf.EM_X86_64, addr: 0x401010,
		code: []byte{0xe8, 0x01, 0x00, 0x00, 0x00}, want: []string{"call   0x401016"}},
	{name: "branch at address 0", m: elf.EM_X86_64, addr: 0,
		code: []byte{0xeb, 0x02}, want: []string{"jmp    0x4"}},
	{name: "intel jne", m: elf.EM_X86_64, addr: 0x401000, intel: true, sym: syms,
		code: []byte{0x75, 0x10}, want: []string{"jne    401012 <foo+0x12>"}},
	{name: "rip-relative comment", m: elf.EM_X86_64, addr: 0x401000, sym: syms,
		code: []byte{0x48, 0x8d, 0x3d, 0xf9, 0x0f, 0x00, 0x00}, want: []string{"lea    0xff9(%rip),%rdi        # 402000 <bar>"}},
	{name: "intel rip-relative", m: elf.EM_X86_64, addr: 0x401000, intel: true,
		code: []byte{0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00}, want: []string{"mov    rax,QWORD PTR [rip+0xff9]        # 0x402000"}},
	{name: "negative displacement", m: elf.EM_X86_64,
		code: []byte{0xc7, 0x85, 0x78, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, want: []string{"movl   $0x7fffffff,-0x88(%rbp)"}},
	{name: "unsigned immediate", m: elf.EM_X86_64,
		code: []byte{0x83, 0xf8, 0xff}, want: []string{"cmp    $0xffffffff,%eax"}},
	{name: "explicit zero displacement and scale", m: elf.EM_X86_64,
		code: []byte{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, want: []string{"nopw   0x0(%rax,%rax,1)"}},
	{name: "rdseed, rdpid, push sign-extended, REX on relative branches, a cut-off REX", m: elf.EM_X86_64,
		code: []byte{0x0f, 0xc7, 0xfa, 0x66, 0x0f, 0xc7, 0xfa, 0x48, 0x0f, 0xc7, 0xfa, 0x41, 0x0f, 0xc7, 0xf8, 0x0f, 0xc7, 0xf2, 0xf3, 0x0f, 0xc7, 0xf8, 0x6a, 0xff, 0x68, 0x00, 0x00, 0x00, 0x80, 0x66, 0x6a, 0xff, 0x66, 0x66, 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0xe9, 0x00, 0x00, 0x00, 0x00, 0x66, 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48},
		want: []string{"rdseed %edx", "rdseed %dx", "rdseed %rdx", "rdseed %r8d", "rdrand %edx", "rdpid  %rax", "push   $0xffffffffffffffff", "push   $0xffffffff80000000", "pushw  $0xffff", "data16 data16 rex.W call 0x28", "rex.W jmp 0x2e", "data16 rex.W call 0x35", "rex.W"}},
	{name: "the same in Intel syntax", m: elf.EM_X86_64, intel: true,
		code: []byte{0x0f, 0xc7, 0xfa, 0x66, 0x0f, 0xc7, 0xfa, 0x48, 0x0f, 0xc7, 0xfa, 0x41, 0x0f, 0xc7, 0xf8, 0x0f, 0xc7, 0xf2, 0xf3, 0x0f, 0xc7, 0xf8, 0x6a, 0xff, 0x68, 0x00, 0x00, 0x00, 0x80, 0x66, 0x6a, 0xff, 0x66, 0x66, 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0xe9, 0x00, 0x00, 0x00, 0x00, 0x66, 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48},
		want: []string{"rdseed edx", "rdseed dx", "rdseed rdx", "rdseed r8d", "rdrand edx", "rdpid  rax", "push   0xffffffffffffffff", "push   0xffffffff80000000", "pushw  0xffff", "data16 data16 rex.W call 0x28", "rex.W jmp 0x2e", "data16 rex.W call 0x35", "rex.W"}},
	{name: "AVX-512 broadcast, zeroing, vdbpsadbw", m: elf.EM_X86_64,
		code: []byte{0x62, 0xf1, 0x6d, 0xc9, 0xfe, 0xd9, 0x62, 0xf1, 0x6d, 0x58, 0xfe, 0x18, 0x62, 0xf1, 0xf5, 0x58, 0x58, 0x10, 0x62, 0xf1, 0x6d, 0x38, 0xfe, 0x18, 0x62, 0xf1, 0x6d, 0xdd, 0xfe, 0x18, 0x62, 0xf3, 0x6d, 0x48, 0x42, 0xd9, 0x05, 0x62, 0xf1, 0x7c, 0x58, 0x5a, 0x00},
		want: []string{"vpaddd %zmm1,%zmm2,%zmm3{%k1}{z}", "vpaddd (%rax){1to16},%zmm2,%zmm3", "vaddpd (%rax){1to8},%zmm1,%zmm2", "vpaddd (%rax){1to8},%ymm2,%ymm3", "vpaddd (%rax){1to16},%zmm2,%zmm3{%k5}{z}", "vdbpsadbw $0x5,%zmm1,%zmm2,%zmm3", "vcvtps2pd (%rax){1to8},%zmm0"}},
	{name: "AVX-512 broadcast, Intel syntax", m: elf.EM_X86_64, intel: true,
		code: []byte{0x62, 0xf1, 0x6d, 0xc9, 0xfe, 0xd9, 0x62, 0xf1, 0x6d, 0x58, 0xfe, 0x18, 0x62, 0xf1, 0xf5, 0x58, 0x58, 0x10, 0x62, 0xf1, 0x6d, 0x38, 0xfe, 0x18, 0x62, 0xf1, 0x6d, 0xdd, 0xfe, 0x18, 0x62, 0xf3, 0x6d, 0x48, 0x42, 0xd9, 0x05, 0x62, 0xf1, 0x7c, 0x58, 0x5a, 0x00},
		want: []string{"vpaddd zmm3{k1}{z},zmm2,zmm1", "vpaddd zmm3,zmm2,DWORD BCST [rax]", "vaddpd zmm2,zmm1,QWORD BCST [rax]", "vpaddd ymm3,ymm2,DWORD BCST [rax]", "vpaddd zmm3{k5}{z},zmm2,DWORD BCST [rax]", "vdbpsadbw zmm3,zmm2,zmm1,0x5", "vcvtps2pd zmm0,DWORD BCST [rax]"}},
	{name: "386 rdseed and rdpid: 41 is inc, not a REX prefix", m: elf.EM_386,
		code: []byte{0x41, 0x0f, 0xc7, 0xf8, 0xf3, 0x0f, 0xc7, 0xf8, 0x0f, 0xc7, 0xfa},
		want: []string{"inc    %ecx", "rdseed %eax", "rdpid  %eax", "rdseed %edx"}},
	{name: "386 moffs and notrack", m: elf.EM_386,
		code: []byte{0xa1, 0x14, 0x00, 0x00, 0x00, 0x65, 0xa1, 0x14, 0x00, 0x00, 0x00, 0xa3, 0x14, 0x00, 0x00, 0x00, 0xa0, 0x14, 0x00, 0x00, 0x00, 0x66, 0xa1, 0x14, 0x00, 0x00, 0x00, 0x65, 0xa2, 0x14, 0x00, 0x00, 0x00, 0x3e, 0xff, 0xe3, 0x3e, 0xff, 0xd0, 0x3e, 0xff, 0x20},
		want: []string{"mov    0x14,%eax", "mov    %gs:0x14,%eax", "mov    %eax,0x14", "mov    0x14,%al", "mov    0x14,%ax", "mov    %al,%gs:0x14", "notrack jmp *%ebx", "notrack call *%eax", "notrack jmp *(%eax)"}},
	{name: "386 moffs and notrack, Intel syntax", m: elf.EM_386, intel: true,
		code: []byte{0xa1, 0x14, 0x00, 0x00, 0x00, 0x65, 0xa1, 0x14, 0x00, 0x00, 0x00, 0xa3, 0x14, 0x00, 0x00, 0x00, 0xa0, 0x14, 0x00, 0x00, 0x00, 0x66, 0xa1, 0x14, 0x00, 0x00, 0x00, 0x65, 0xa2, 0x14, 0x00, 0x00, 0x00, 0x3e, 0xff, 0xe3, 0x3e, 0xff, 0xd0, 0x3e, 0xff, 0x20},
		want: []string{"mov    eax,ds:0x14", "mov    eax,gs:0x14", "mov    ds:0x14,eax", "mov    al,ds:0x14", "mov    ax,ds:0x14", "mov    gs:0x14,al", "notrack jmp ebx", "notrack call eax", "notrack jmp DWORD PTR [eax]"}},
	{name: "moves to a segment register, Intel syntax", m: elf.EM_386, intel: true,
		code: []byte{0x8e, 0xe1, 0x8c, 0xe1, 0x66, 0x8e, 0xe1}, want: []string{"mov    fs,ecx", "mov    ecx,fs", "mov    fs,cx"}},
	{name: "moves to a segment register, 64-bit Intel syntax", m: elf.EM_X86_64, intel: true,
		code: []byte{0x8e, 0xe1, 0x8c, 0xe1, 0x66, 0x8e, 0xe1}, want: []string{"mov    fs,ecx", "mov    ecx,fs", "mov    fs,cx"}},
	{name: "Intel: data16 overridden by REX.W, mandatory 66, blendv's implicit xmm0", m: elf.EM_X86_64, intel: true,
		code: []byte{0x66, 0x48, 0x8d, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x66, 0x48, 0x0f, 0x6e, 0xc0, 0x66, 0x0f, 0x38, 0x14, 0xcb, 0x66, 0x0f, 0x38, 0x15, 0xcb, 0x66, 0x0f, 0x38, 0x10, 0xcb, 0x66, 0x0f, 0x38, 0x14, 0x0b},
		want: []string{"data16 lea rdi,[rip+0x0]        # 0x8", "movq   xmm0,rax", "blendvps xmm1,xmm3,xmm0", "blendvpd xmm1,xmm3,xmm0", "pblendvb xmm1,xmm3,xmm0", "blendvps xmm1,XMMWORD PTR [rbx],xmm0"}},
	{name: "padding prefixes", m: elf.EM_X86_64,
		code: []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, want: []string{"cs nopw 0x0(%rax,%rax,1)"}},
	{name: "endbr64 ret", m: elf.EM_X86_64,
		code: []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xc3}, want: []string{"endbr64", "ret"}},
	{name: "movabs", m: elf.EM_X86_64,
		code: []byte{0x48, 0xb8, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, want: []string{"movabs $0xfffffffffffffff0,%rax"}},
	{name: "vzeroupper length", m: elf.EM_X86_64,
		code: []byte{0xc5, 0xf8, 0x77, 0x5b, 0x41, 0x5c}, want: []string{"vzeroupper", "pop    %rbx", "pop    %r12"}},
	{name: "intel sse compare predicate", m: elf.EM_X86_64, intel: true,
		code: []byte{0xf2, 0x44, 0x0f, 0xc2, 0xd8, 0x06}, want: []string{"cmpnlesd xmm11,xmm0"}},
	{name: "att sse compare predicate", m: elf.EM_X86_64,
		code: []byte{0xf2, 0x44, 0x0f, 0xc2, 0xd8, 0x06}, want: []string{"cmpnlesd %xmm0,%xmm11"}},
	{name: "avx-512 masked operand", m: elf.EM_X86_64,
		code: []byte{0x62, 0xb1, 0x45, 0x22, 0x76, 0x4c, 0x06, 0xff}, want: []string{"vpcmpeqd -0x20(%rsi,%r8,1),%ymm23,%k1{%k2}"}},
	{name: "bad byte then valid", m: elf.EM_X86_64,
		code: []byte{0x06, 0x90}, want: []string{"(bad)", "nop"}},
	{name: "truncated instruction", m: elf.EM_X86_64,
		code: []byte{0x90, 0xe8, 0x01}, want: []string{"nop", ".byte  0xe8", ".byte  0x1"}},
	{name: "386", m: elf.EM_386, addr: 0x401000, sym: syms,
		code: []byte{0x55, 0x89, 0xe5}, want: []string{"push   %ebp", "mov    %esp,%ebp"}},
	{name: "arm64 bl", m: elf.EM_AARCH64, addr: 0x401000, sym: syms,
		code: []byte{0x04, 0x00, 0x00, 0x94}, want: []string{"bl\t401010 <foo+0x10>"}},
	{name: "arm64 b.ne", m: elf.EM_AARCH64, addr: 0x401008, sym: syms,
		code: []byte{0xc1, 0xff, 0xff, 0x54}, want: []string{"b.ne\t401000 <foo>  // b.any"}},
	{name: "arm64 adrp", m: elf.EM_AARCH64, addr: 0x401234,
		code: []byte{0x00, 0x00, 0x00, 0x90}, want: []string{"adrp\tx0, 0x401000"}},
	{name: "arm64 ldp and mov", m: elf.EM_AARCH64,
		code: []byte{0xfd, 0x7b, 0xc1, 0xa8, 0x08, 0x64, 0x90, 0x52, 0xc0, 0x03, 0x5f, 0xd6},
		want: []string{"ldp\tx29, x30, [sp], #16", "mov\tw8, #0x8320\t// #33568", "ret"}},
	{name: "arm64 undefined words", m: elf.EM_AARCH64,
		code: []byte{0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x02, 0x1f, 0x20, 0x03, 0xd5},
		want: []string{"udf\t#0", ".inst\t0x02000028 ; undefined", "nop"}},
	{name: "arm64 short tail", m: elf.EM_AARCH64, addr: 8, code: []byte{0x1f, 0x20, 0x03, 0xd5, 0x01, 0x02},
		want: []string{"nop", "(bad)"}, notObjdump: `objdump says "Address 0xc is out of bounds."`},
	{name: "arm64 LSE atomics", m: elf.EM_AARCH64,
		code: le32(0xf8e600a4, 0x88e17c5b, 0xb820003f, 0xb8a180a2),
		want: []string{"ldaddal\tx6, x4, [x5]", "casa\tw1, w27, [x2]", "stadd\tw0, [x1]", "swpa\tw1, w2, [x5]"}},
	{name: "arm64 SHA-512 and SHA-3", m: elf.EM_AARCH64,
		code: le32(0xce6780c3, 0xce608423, 0xcec081ac, 0xce658a6c, 0xce362354, 0xce9efc39, 0xce0f5159, 0xce7b8f3e),
		want: []string{"sha512h\tq3, q6, v7.2d", "sha512h2\tq3, q1, v0.2d", "sha512su0\tv12.2d, v13.2d", "sha512su1\tv12.2d, v19.2d, v5.2d",
			"bcax\tv20.16b, v26.16b, v22.16b, v8.16b", "xar\tv25.2d, v1.2d, v30.2d, #63", "eor3\tv25.16b, v10.16b, v15.16b, v20.16b", "rax1\tv30.2d, v25.2d, v27.2d"}},
	// clang-19 -mcpu=neoverse-v1's saxpy loop and glibc's A64FX memcpy.
	{name: "arm64 SVE", m: elf.EM_AARCH64,
		code: le32(0x0460e3e9, 0x05242001, 0x2598e3e0, 0xa540a1c2, 0xa541a1c4, 0x65a38022, 0x0420bca3, 0x65a40023,
			0xe541e1a3, 0x25a10c00, 0x058004e0, 0x05c00000, 0x2578ffe0, 0x25b9ce00, 0x8521c020, 0xc5e3c440, 0xe4e3c440),
		want: []string{"cnth\tx9", "mov\tz1.s, s0", "ptrue\tp0.s", "ld1w\t{z2.s}, p0/z, [x14]", "ld1w\t{z4.s}, p0/z, [x14, #1, mul vl]",
			"fmad\tz2.s, p0/m, z1.s, z3.s", "movprfx\tz3, z5", "fmla\tz3.s, p0/m, z1.s, z4.s", "st1w\t{z3.s}, p0, [x13, #1, mul vl]",
			"whilelo\tp0.s, w0, w1", "and\tz0.h, z0.h, #0xff", "dupm\tz0.s, #0x1", "mov\tz0.h, #-256",
			"fmov\tz0.s, #1.000000000000000000e+00", "ld1w\t{z0.s}, p0/z, [z1.s, #4]", "ld1d\t{z0.d}, p1/z, [x2, z3.d, lsl #3]",
			"st1h\t{z0.s}, p1, [x2, z3.s, sxtw #1]"}},
	// clang-19 -mcpu=neoverse-n2's rounding average, and narrowing; int8
	// and bf16 inference kernels' dot products and matrix multiplies.
	{name: "arm64 SVE2", m: elf.EM_AARCH64,
		code: le32(0x44558020, 0x45304020, 0x453d1020, 0x45827020, 0x44baf820, 0x44827820, 0x45029820, 0x64628020, 0x4522e020, 0x25e12000),
		want: []string{"urhadd\tz0.h, p0/m, z0.h, z1.h", "sqxtnb\tz0.h, z1.s", "shrnb\tz0.h, z1.s, #3", "smullb\tz0.s, z1.h, z2.h", "mul\tz0.s, z1.s, z2.s[3]",
			"usdot\tz0.s, z1.b, z2.b", "smmla\tz0.s, z1.b, z2.b", "bfdot\tz0.s, z1.h, z2.h", "aese\tz0.b, z0.b, z1.b", "ctermeq\tx0, x1"}},
	{name: "arm64 system registers and fcmp", m: elf.EM_AARCH64,
		code: le32(0xd53b4200, 0xd53be040, 0x1e202008),
		want: []string{"mrs\tx0, nzcv", "mrs\tx0, cntvct_el0", "fcmp\ts0, #0.0"}},
	{name: "riscv branch, lui and its address", m: elf.EM_RISCV, addr: 0x1000,
		code: []byte{0xad, 0xcd, 0xb7, 0x16, 0xb7, 0x1d, 0x8e, 0x06, 0x93, 0x86, 0x06, 0x32},
		want: []string{"beqz\ta1,0x107a", "lui\ta3,0x1db71", "sll\ta3,a3,0x3", "add\ta3,a3,800 # 0x1db71320"}},
	{name: "riscv branch with symbol", m: elf.EM_RISCV, addr: 0x401000, sym: syms,
		code: []byte{0xad, 0xcd}, want: []string{"beqz\ta1,40107a <foo+0x7a>"}},
	{name: "riscv rounding modes", m: elf.EM_RISCV,
		code: le32(0x02b50553, 0x02b57553, 0xd2050553, 0x0aa07043),
		want: []string{"fadd.d\tfa0,fa0,fa1,rne", "fadd.d\tfa0,fa0,fa1", "fcvt.d.w\tfa0,a0", "fmadd.d\tft0,ft0,fa0,ft1"}},
	{name: "riscv CSR immediates and jalr without an offset", m: elf.EM_RISCV, addr: 0x1000,
		code: le32(0x00186073, 0x00187073, 0x00185073, 0x00186573, 0x0021d073, 0x0011d573, 0x3001d073, 0x3001f573, 0x000e0367, 0x010e0367, 0x000e00e7),
		want: []string{"csrs\tfflags,16", "csrc\tfflags,16", "fsflagsi\tzero,16", "csrrs\ta0,fflags,16", "fsrmi\tzero,3", "fsflagsi\ta0,3",
			"csrw\tmstatus,3", "csrrc\ta0,mstatus,3", "jalr\tt1,t3", "jalr\tt1,16(t3)", "jalr\tt3"}},
	{name: "riscv undecodable", m: elf.EM_RISCV,
		code: []byte{0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0, 0}, want: []string{"unimp", ".2byte\t0xffff", ".2byte\t0xffff", ".byte\t0x1f, 0x00, 0x00, 0x00, 0x00, 0x00"}},
	{name: "rv32 compressed jal, flw, fsw and a 32-bit address", m: elf.EM_RISCV, rv32: true, addr: 0x1000,
		code: []byte{0x01, 0x28, 0xc8, 0x61, 0xb0, 0xe3, 0x32, 0x65, 0x2e, 0xe5, 0x01, 0x30, 0x37, 0x05, 0x00, 0x80, 0x13, 0x05, 0x05, 0x01},
		want: []string{"jal\t0x1010", "flw\tfa0,4(a1)", "fsw\tfa2,64(a5)", "flw\tfa0,12(sp)", "fsw\tfa1,136(sp)", "jal\t0x80a", "lui\ta0,0x80000", "add\ta0,a0,16 # 0x80000010"}},
	{name: "ppc64le extended mnemonics", m: elf.EM_PPC64, addr: 0x1000,
		code: le32(0x788507e0, 0x7887f842, 0x7c651b78, 0x48000001, 0x7c64209e, 0),
		want: []string{"clrldi  r5,r4,63", "srdi    r7,r4,1", "mr      r5,r3", "bl      0x100c", "iseleq  r3,r4,r4", ".long 0x0"}},
	{name: "ppc64le aliases, transactional memory, reserved fields", m: elf.EM_PPC64, addr: 0x1000,
		code: le32(0x7c0043a6, 0x7c0042a6, 0x7c0d03a6, 0x7d2d02a6, 0x79083810, 0xf18c6510, 0x10210d04, 0x7d09322c,
			0x7c00051d, 0x7c20051d, 0x7c00055d, 0x7e00055d, 0x7c0a071d, 0x00000200, 0xfffffe34, 0xfffffa24, 0xfffffe9c, 0xfc211034,
			0xfc21102c, 0xec20106c, 0xfc21169c, 0xfc20102c, 0x00000a00, 0xfffffd08, 0xff84f908),
		want: []string{"mtvrsave r0", "mfvrsave r0", "mtuamr  r0", "mfuamr  r9", "rotld   r8,r8,r7", "xxlnot  vs12,vs12", "vnot    v1,v1", "dcbtds  r9,r6",
			"tbegin.", "tbegin. 1", "tend.", "tendall.", "tabort. r10", "attn", ".long 0xfffffe34", ".long 0xfffffa24", ".long 0xfffffe9c", "frsqrte f1,f2,1",
			".long 0xfc21102c", ".long 0xec20106c", ".long 0xfc21169c", "fsqrt   f1,f2",
			"attn", ".long 0xfffffd08", "xscmpoqp cr7,v4,v31"}},
	{name: "ppc y-bit branches, traps, CR aliases, rotations, sc", m: elf.EM_PPC64, bo: binary.BigEndian, addr: 0x1000,
		code: be32(0x40a2fff0, 0x4ca20020, 0x4260ffe0, 0x41a3fff8, 0x4e600020, 0x4ca20420, 0x41a2fff0, 0x4e200020,
			0x7c832008, 0x7f032008, 0x7e032008, 0x7c232008, 0x7c832088, 0x7f032088, 0x0c830008, 0x0b030008,
			0x4cc63182, 0x4cc63242, 0x4cc73842, 0x4cc73b82, 0x5cca503e, 0x78740000, 0x44000f42, 0x47495f5f, 0x00000201),
		want: []string{"bne     0xff0", "bnelr+", "bdz     0xfe8", "bso     0x1004", "bdzlr+", "bnectr+", "beq     0x1008", "bdnzlr+",
			"tweq    r3,r4", "twne    r3,r4", "twlt    r3,r4", "twlgt   r3,r4", "tdeq    r3,r4", "tdne    r3,r4", "tweqi   r3,8", "tdnei   r3,8",
			"crclr   4*cr1+eq", "crset   4*cr1+eq", "crnot   4*cr1+eq,4*cr1+so", "crmove  4*cr1+eq,4*cr1+so", "rotlw   r10,r6,r10", "rotldi  r20,r3,0",
			"sc      122", ".long 0x47495f5f", ".long 0x201"}},
	{name: "ppc64 big-endian", m: elf.EM_PPC64, bo: binary.BigEndian, addr: 0x1000,
		code: []byte{0x7c, 0x65, 0x1b, 0x78, 0x4b, 0xff, 0xff, 0xfd}, want: []string{"mr      r5,r3", "bl      0x1000"}},
	{name: "ppc64 branch with symbol", m: elf.EM_PPC64, addr: 0x401ffc, sym: syms,
		code: le32(0x48000005), want: []string{"bl      402000 <bar>"}},
	{name: "arm64 memory tagging", m: elf.EM_AARCH64, addr: 0x1000,
		code: le32(0x9ac11000, 0x9adf1022, 0x9ac313ff, 0x9adf1401, 0x9ac217e3, 0xd9600000, 0xd96013e2, 0xd97ff064, 0xd920243f, 0xd93fe7e3, 0xd920283f, 0xd93febe3, 0xd9202c3f, 0xd93fefe3, 0xd960243f, 0xd97fe7e3, 0xd960283f, 0xd97febe3, 0xd9602c3f, 0xd97fefe3, 0xd9a0243f, 0xd9bfe7e3, 0xd9a0283f, 0xd9bfebe3, 0xd9a02c3f, 0xd9bfefe3, 0xd9e0243f, 0xd9ffe7e3, 0xd9e0283f, 0xd9ffebe3, 0xd9e02c3f, 0xd9ffefe3, 0x9ac20020, 0xbac20020, 0xbac2003f, 0x91830820, 0xd1830bff, 0x91800000, 0xd9e00022, 0xd9200022, 0xd9a00022),
		want: []string{"irg\tx0, x0, x1", "irg\tx2, x1", "irg\tsp, sp, x3", "gmi\tx1, x0, xzr", "gmi\tx3, sp, x2", "ldg\tx0, [x0]", "ldg\tx2, [sp, #16]", "ldg\tx4, [x3, #-16]", "stg\tsp, [x1], #32", "stg\tx3, [sp], #-32", "stg\tsp, [x1, #32]", "stg\tx3, [sp, #-32]", "stg\tsp, [x1, #32]!", "stg\tx3, [sp, #-32]!", "stzg\tsp, [x1], #32", "stzg\tx3, [sp], #-32", "stzg\tsp, [x1, #32]", "stzg\tx3, [sp, #-32]", "stzg\tsp, [x1, #32]!", "stzg\tx3, [sp, #-32]!", "st2g\tsp, [x1], #32", "st2g\tx3, [sp], #-32", "st2g\tsp, [x1, #32]", "st2g\tx3, [sp, #-32]", "st2g\tsp, [x1, #32]!", "st2g\tx3, [sp, #-32]!", "stz2g\tsp, [x1], #32", "stz2g\tx3, [sp], #-32", "stz2g\tsp, [x1, #32]", "stz2g\tx3, [sp, #-32]", "stz2g\tsp, [x1, #32]!", "stz2g\tx3, [sp, #-32]!", "subp\tx0, x1, x2", "subps\tx0, x1, x2", "cmpp\tx1, x2", "addg\tx0, x1, #0x30, #0x2", "subg\tsp, sp, #0x30, #0x2", "addg\tx0, x0, #0x0, #0x0", "ldgm\tx2, [x1]", "stzgm\tx2, [x1]", "stgm\tx2, [x1]"}},
	{name: "arm64 pointer authentication and BTI hints", m: elf.EM_AARCH64, addr: 0x1000,
		code: le32(0xd50320ff, 0xd503233f, 0xd50323bf, 0xd503245f, 0xd503249f, 0xd503223f, 0xd503229f, 0xd50322df, 0xd50320df), want: []string{"xpaclri", "paciasp", "autiasp", "bti\tc", "bti\tj", "psb\tcsync", "csdb", "clearbhb", "hint\t#0x6"}},
	{name: "s390x", m: elf.EM_S390, addr: 0x1000,
		code: []byte{0xa7, 0xf4, 0x00, 0x08, 0xec, 0x41, 0x3f, 0xbf, 0x00, 0x55, 0xe3, 0xf0, 0xff, 0xe8, 0xff, 0x71, 0x07, 0x00},
		want: []string{"j\t0x1010", "risbgz\t%r4,%r1,63,63,0", "lay\t%r15,-24(%r15)", "nopr"}},
	{name: "s390x branches on condition, SI bytes, lengths with base 0", m: elf.EM_S390, addr: 0x1000,
		code: []byte{0x07, 0xce, 0x07, 0x3e, 0x07, 0xfe, 0x47, 0xc0, 0x10, 0x00, 0x47, 0x00, 0x10, 0x00, 0x94, 0xf8, 0xb0, 0x03,
			0x96, 0x80, 0xa0, 0x05, 0xeb, 0xff, 0x10, 0x00, 0x00, 0x54, 0xd2, 0x1b, 0x00, 0x00, 0x50, 0x00, 0xf2, 0x31, 0x10, 0x00, 0x00, 0x00},
		want: []string{"bler\t%r14", "bnler\t%r14", "br\t%r14", "ble\t0(%r1)", "nop\t0(%r1)", "ni\t3(%r11),248",
			"oi\t5(%r10),128", "niy\t0(%r1),255", "mvc\t0(28,%r0),0(%r5)", "pack\t0(4,%r1),0(2,%r0)"}},
	{name: "s390x jump with symbol", m: elf.EM_S390, addr: 0x401000, sym: syms,
		code: []byte{0xa7, 0xf4, 0x00, 0x08}, want: []string{"j\t401010 <foo+0x10>"}},
	{name: "arm load and store multiple names, udf, IMB, a conditional pop's comment", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xe8ac000f, 0xe88c000f, 0xe8bd8000, 0xe8b0000e, 0x28a3100e, 0x08bd8000, 0x049df004, 0xe7f000f0, 0xe7f123f4, 0xef9f0000, 0x3ff00000, 0xfff00000, 0xeff00001, 0xe9ad000f, 0xe92d4000, 0x092d4000, 0xe8bd0010),
		want: []string{"stmia\tip!, {r0, r1, r2, r3}", "stm\tip, {r0, r1, r2, r3}", "ldmfd\tsp!, {pc}", "ldm\tr0!, {r1, r2, r3}", "stmiacs\tr3!, {r1, r2, r3, ip}", "ldmfdeq\tsp!, {pc}", "popeq\t{pc}\t@ (ldreq pc, [sp], #4)", "udf\t#0", "udf\t#4660\t@ 0x1234", "svc\t0x009f0000", "svccc\t0x00f00000 @ IMB", "@ <UNDEFINED> instruction: 0xfff00000 @ IMB", "svc\t0x00f00001 @ IMBRange", "stmib\tsp!, {r0, r1, r2, r3}", "stmfd\tsp!, {lr}", "stmfdeq\tsp!, {lr}", "ldmfd\tsp!, {r4}"}},
	{name: "arm prologue, comments, vpush", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xe92d4010, 0xe3087320, 0xe59f000c, 0xed2d8b04, 0xe59d0068, 0xe52de060, 0xe3a00b01, 0xe3a00001),
		want: []string{"push\t{r4, lr}", "movw\tr7, #33568\t@ 0x8320", "ldr\tr0, [pc, #12]\t@ 0x101c", "vpush\t{d8-d9}",
			"ldr\tr0, [sp, #104]\t@ 0x68", "str\tlr, [sp, #-96]!\t@ 0xffffffa0", "mov\tr0, #1024\t@ 0x400", "mov\tr0, #1"}},
	{name: "arm epilogue, barrier, branch", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xecbd8b04, 0xecb11a01, 0xf57ff05b, 0xe789c10e, 0xeeb50bc0, 0xe49df004, 0x1afffffa, 0x001009db),
		want: []string{"vpop\t{d8-d9}", "vldmia\tr1!, {s2}", "dmb\tish", "str\tip, [r9, lr, lsl #2]", "vcmpe.f64\td0, #0.0",
			"pop\t{pc}\t@ (ldr pc, [sp], #4)", "bne\t0x1008", "@ <UNDEFINED> instruction: 0x001009db"}},
	{name: "arm coprocessor moves, VFP immediate, nop, rotated immediate", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xee1d0f70, 0x1e070fba, 0xec410b30, 0xec510b30, 0xeeb70b00, 0xeef84a00, 0xe1a00000, 0xe28ccae4),
		want: []string{"mrc\t15, 0, r0, cr13, cr0, {3}", "mcrne\t15, 0, r0, cr7, cr10, {5}", "vmov\td16, r0, r1", "vmov\tr0, r1, d16",
			"vmov.f64\td0, #112\t@ 0x3f800000  1.0", "vmov.f32\ts9, #128\t@ 0xc0000000 -2.0", "nop\t\t\t@ (mov r0, r0)", "add\tip, ip, #228, 20\t@ 0xe4000"}},
	{name: "arm NEON: arithmetic, immediates, shifts, loads, scalars, transfers", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xf26008e2, 0xf2c00e5f, 0xf2800010, 0xf3f06074, 0xf4630aef, 0xf4ee283f, 0xf3a24842, 0xee100b10, 0xeea00b90, 0xf3b005c2),
		want: []string{"vadd.i32\tq8, q8, q9", "vmov.i8\tq8, #15\t@ 0x0f", "vmov.i32\td0, #0\t@ 0x00000000", "vshr.u32\tq11, q10, #16",
			"vld1.64\t{d16-d17}, [r3 :128]", "vld1.32\t{d18[0]}, [lr :32]", "vmul.i32\tq2, q1, d2[0]", "vmov.32\tr0, d0[0]", "vdup.32\tq8, r0", "vmvn\tq0, q1"}},
	{name: "thumb NEON", m: elf.EM_ARM, thumb: true, addr: 0x1000,
		code: []byte{0x60, 0xef, 0xe2, 0x08, 0x63, 0xf9, 0xef, 0x0a, 0xf0, 0xff, 0x74, 0x60, 0x08, 0xbf, 0x60, 0xef, 0xe2, 0x08},
		want: []string{"vadd.i32\tq8, q8, q9", "vld1.64\t{d16-d17}, [r3 :128]", "vshr.u32\tq11, q10, #16", "it\teq", "vaddeq.i32\tq8, q8, q9"}},
	{name: "arm generic coprocessor instructions", m: elf.EM_ARM, addr: 0x1000,
		code: le32(0xed12000e, 0xeda2000d, 0xeccc0008, 0xecb8000d, 0xed9f0003, 0xed1f0003, 0xee26000c, 0xfe46f080, 0xfdcdffff, 0xfc56ffff, 0xfea3ffff, 0xfe37f359, 0xed820000),
		want: []string{"ldc\t0, cr0, [r2, #-56]\t@ 0xffffffc8", "stc\t0, cr0, [r2, #52]!\t@ 0x34", "stcl\t0, cr0, [ip], {8}", "ldc\t0, cr0, [r8], #52\t@ 0x34",
			"ldc\t0, cr0, [pc, #12]\t@ 0x1024", "ldc\t0, cr0, [pc, #-12]\t@ 0x1010", "cdp\t0, 2, cr0, cr6, cr12, {0}", "cdp2\t0, 4, cr15, cr6, cr0, {4}",
			"stc2l\t15, cr15, [sp, #1020]\t@ 0x3fc", "mrrc2\t15, 15, pc, r6, cr15\t@ <UNPREDICTABLE>", "mcr2\t15, 5, pc, cr3, cr15, {7}\t@ <UNPREDICTABLE>",
			"mrc2\t3, 1, pc, cr7, cr9, {2}", "stc\t0, cr0, [r2]"}},
	{name: "arm call with symbol", m: elf.EM_ARM, addr: 0x401000, sym: syms,
		code: le32(0xeb000002), want: []string{"bl\t401010 <foo+0x10>"}},
	{name: "thumb prologue, IT block, literals, VFP", m: elf.EM_ARM, thumb: true, addr: 0x1000,
		code: []byte{0x2d, 0xe9, 0xf0, 0x41, 0x0c, 0xbf, 0x01, 0x20, 0x00, 0x20, 0xdf, 0xf8, 0x10, 0x00, 0x9f, 0xed, 0x04, 0x0b,
			0xb7, 0xee, 0x00, 0x1b, 0x70, 0x47, 0xbd, 0xe8, 0xf0, 0x81},
		want: []string{"stmdb\tsp!, {r4, r5, r6, r7, r8, lr}", "ite\teq", "moveq\tr0, #1", "movne\tr0, #0", "ldr.w\tr0, [pc, #16]\t@ 0x101c",
			"vldr\td0, [pc, #16]\t@ 0x1020", "vmov.f64\td1, #112\t@ 0x3f800000  1.0", "bx\tlr", "ldmia.w\tsp!, {r4, r5, r6, r7, r8, pc}"}},
	{name: "thumb branches, 16-bit forms", m: elf.EM_ARM, thumb: true, addr: 0x401000, sym: syms,
		code: []byte{0x00, 0xf0, 0x06, 0xf8, 0x10, 0xb1, 0x03, 0xd0, 0x4b, 0x1c, 0xa8, 0xbf, 0x9b, 0x68, 0x00, 0xde},
		want: []string{"bl\t401010 <foo+0x10>", "cbz\tr0, 40100c <foo+0xc>", "beq.n\t401010 <foo+0x10>", "adds\tr3, r1, #1", "it\tge", "ldrge\tr3, [r3, #8]", "udf\t#0"}},
	{name: "mips o32 prologue, aliases, branches, FPU", m: elf.EM_MIPS, bo: binary.BigEndian, addr: 0x1000,
		code: be32(0x27bdffe0, 0xafbf001c, 0x00a02025, 0x24050005, 0x3c01edb8, 0x34218320, 0x10a00003, 0x00000000, 0x00052023, 0x0c000410,
			0x46020800, 0xc4a00004, 0x45010003, 0x7c851000, 0x00221402, 0x03e00008, 0x0000000d, 0x7c02e83b, 0xffffffff),
		want: []string{"addiu\tsp,sp,-32", "sw\tra,28(sp)", "move\ta0,a1", "li\ta1,5", "lui\tat,0xedb8", "ori\tat,at,0x8320", "beqz\ta1,0x1028", "nop",
			"negu\ta0,a1", "jal\t0x1040", "add.s\t$f0,$f1,$f2", "lwc1\t$f0,4(a1)", "bc1t\t0x1040", "ext\ta1,a0,0x0,0x3", "ror\tv0,v0,0x10",
			"jr\tra", "break", "rdhwr\tv0,$29", "sd\tra,-1(ra)"}},
	// No GNU objdump on Debian 12 reads LoongArch (binutils-multiarch
	// 2.40 leaves it out): the texts are binutils' layout of the
	// decoder's GNU syntax; TestLoongArchAgainstLLVM checks the decoding
	// against llvm-objdump.
	{name: "loongarch branch, lu12i.w, move, b", m: elf.EM_LOONGARCH, addr: 0x1000,
		code:       le32(0x4000e0a0, 0x15db7107, 0x00150007, 0x5000b000),
		want:       []string{"beqz        \t$a1, 224\t# 0x10e0", "lu12i.w     \t$a3, -74872", "move        \t$a3, $zero", "b           \t176\t# 0x10bc"},
		notObjdump: "no GNU objdump for LoongArch here"},
	{name: "loongarch call with symbol, ret, jr", m: elf.EM_LOONGARCH, addr: 0x401000, sym: syms,
		code: le32(0x54000400, 0x4c000020, 0x4c0000c0), want: []string{"bl          \t4\t# 401004 <foo+0x4>", "ret         ", "jr          \t$a2"}},
	{name: "loongarch unsigned immediates and LASX", m: elf.EM_LOONGARCH,
		code:       le32(0x00de10a7, 0x2cbf8103, 0x769f0921, 0x740b0802),
		want:       []string{"bstrpick.d  \t$a3, $a1, 0x1e, 0x4", "xvld        \t$xr3, $a4, -32", "xvreplgr2vr.w\t$xr1, $a5", "xvadd.w     \t$xr2, $xr0, $xr2"},
		notObjdump: "no GNU objdump for LoongArch here"},
	{name: "loongarch undecodable word and short tail", m: elf.EM_LOONGARCH,
		code: []byte{0xff, 0xff, 0xff, 0xff, 0x20, 0x00}, want: []string{"0xffffffff", "(bad)"}, notObjdump: "no GNU objdump for LoongArch here"},
	{name: "empty", m: elf.EM_X86_64, want: nil},
}

func TestDecode(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			insts, err := decodeFor(tt.m, tt.bo, tt.rv32, tt.thumb, tt.code, tt.addr, tt.intel, tt.sym)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range insts {
				got = append(got, in.Text)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			checkCover(t, insts, tt.code, tt.addr)
		})
	}
}

// decodeFor is Decode, or DecodeRV32 for the code of a 32-bit RISC-V
// file (rv32).
func decodeFor(m elf.Machine, bo binary.ByteOrder, rv32, thumb bool, code []byte, addr uint64, intel bool, sym Symbolizer) ([]Inst, error) {
	switch {
	case rv32:
		return DecodeRV32(code, addr, sym), nil
	case thumb:
		return DecodeThumb(code, addr, sym), nil
	}
	return Decode(m, bo, code, addr, intel, sym)
}

// be32 encodes big-endian instruction words (MIPS, PowerPC).
func be32(words ...uint32) []byte {
	var b []byte
	for _, w := range words {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// le32 encodes little-endian instruction words.
func le32(words ...uint32) []byte {
	var b []byte
	for _, w := range words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// checkCover checks that insts cover code exactly, in address order.
func checkCover(t testing.TB, insts []Inst, code []byte, addr uint64) {
	t.Helper()
	next := addr
	for _, in := range insts {
		if in.Addr != next || in.Len < 1 || in.Text == "" {
			t.Fatalf("instruction %+v, want one at %#x with a length and a text", in, next)
		}
		next += uint64(in.Len)
	}
	if next != addr+uint64(len(code)) {
		t.Fatalf("instructions end at %#x, want %#x", next, addr+uint64(len(code)))
	}
}

// TestData: the words of an ARM literal pool read as objdump shows them,
// in the file's byte order, a shorter tail by halfword and byte.
func TestData(t *testing.T) {
	code := []byte{0x3c, 0, 0, 0, 0x20, 0x83, 0xb8, 0xed, 0x01, 0x02, 0x03}
	var got []string
	for _, in := range Data(code, 0x100, binary.LittleEndian) {
		got = append(got, fmt.Sprintf("%#x/%d %s", in.Addr, in.Len, in.Text))
	}
	want := []string{"0x100/4 .word\t0x0000003c", "0x104/4 .word\t0xedb88320", "0x108/2 .short\t0x0201", "0x10a/1 .byte\t0x03"}
	if !slices.Equal(got, want) {
		t.Errorf("Data = %q, want %q", got, want)
	}
	checkCover(t, Data(code, 0x100, binary.BigEndian), code, 0x100)
	if in := Data(code[:4], 0, binary.BigEndian); in[0].Text != ".word\t0x3c000000" {
		t.Errorf("big-endian word: %q", in[0].Text)
	}
}

func TestDecodeUnsupportedMachine(t *testing.T) {
	_, err := Decode(elf.EM_SPARCV9, nil, []byte{0x81, 0xc3, 0xe0, 0x08}, 0, false, nil)
	var ue *UnsupportedMachineError
	if !errors.As(err, &ue) || ue.Machine != elf.EM_SPARCV9 {
		t.Fatalf("got %v, want *UnsupportedMachineError for EM_SPARCV9", err)
	}
}

// FuzzDecode decodes any bytes at any address. mode selects the machine
// (bits 0, 1, 3 and 4: 0 and 1 x86-64, 2 AArch64, 3 386, 8 RISC-V, 9
// ppc64le, 10 big-endian ppc64, 11 s390x, 16 to 19 LoongArch, 24 32-bit
// ARM, 25 RV32, 26 big-endian MIPS, 27 Thumb) and the syntax (bit 2:
// Intel).
// Seeds: the f.Add cases and testdata/fuzz/FuzzDecode (real code).
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xe8, 0x01, 0x00, 0x00, 0x00, 0xc3}, uint64(0x401000), uint8(0))
	f.Add([]byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, uint64(0), uint8(1))
	f.Add([]byte{0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x05, 0, 0, 0, 0}, uint64(0xfffffffffffffff0), uint8(0))
	f.Add([]byte{0xc5, 0x7d, 0x6f, 0x15, 0x29, 0xd4, 0x04, 0x00}, uint64(0x15448f), uint8(1))
	f.Add([]byte{0x04, 0x00, 0x00, 0x94, 0x00, 0x00, 0x00, 0x90, 0x01}, uint64(0x401000), uint8(2))
	f.Add(le32(0xa540a1c2, 0x65a38022, 0x0420bca3, 0xe541e1a3, 0xc5e3c440, 0x25034440), uint64(0x1000), uint8(2)) // SVE
	f.Add([]byte{0xf3, 0x0f, 0x1e}, uint64(7), uint8(3))
	f.Add([]byte{0x13, 0x05, 0x05, 0x00, 0x01, 0x45, 0xb7, 0x06, 0x00, 0x80}, uint64(0x1000), uint8(8))
	f.Add([]byte{0x78, 0x1b, 0x65, 0x7c, 0x01, 0x00, 0x00, 0x48, 0x00, 0x00, 0x00, 0x06}, uint64(0x1000), uint8(9))
	f.Add([]byte{0x7c, 0x65, 0x1b, 0x78, 0x48, 0x00, 0x00, 0x01}, uint64(0x1000), uint8(10))
	f.Add([]byte{0xa7, 0xf4, 0x00, 0x08, 0xec, 0x41, 0x3f, 0xbf, 0x00, 0x55}, uint64(0x1000), uint8(11))
	f.Add([]byte{0xa0, 0xe0, 0x00, 0x40, 0x00, 0x04, 0x00, 0x54, 0x21, 0x09, 0x9f, 0x76, 0x20}, uint64(0x1000), uint8(16))
	f.Add([]byte{0x04, 0x8b, 0x2d, 0xed, 0x0e, 0xc1, 0x89, 0xe7, 0xfe, 0xff, 0xff, 0xea, 0x01}, uint64(0xfffffff8), uint8(24))
	f.Add([]byte{0x27, 0xbd, 0xff, 0xe0, 0xaf, 0xbf, 0x00, 0x1c, 0x10, 0xa0, 0x00, 0x03, 0x46, 0x02, 0x08, 0x00, 0x7c}, uint64(0x1000), uint8(26))
	f.Add([]byte{0x2d, 0xe9, 0xf0, 0x41, 0x08, 0xbf, 0x01, 0x20, 0xdf, 0xf8, 0x10, 0x00, 0x9f, 0xed, 0x04, 0x0b, 0x70, 0x47, 0x01}, uint64(0x10000), uint8(27))
	f.Fuzz(func(t *testing.T, code []byte, addr uint64, mode uint8) {
		type target struct {
			m     elf.Machine
			bo    binary.ByteOrder
			rv32  bool
			thumb bool
		}
		targets := [...]target{
			{m: elf.EM_X86_64, bo: binary.LittleEndian}, {m: elf.EM_X86_64, bo: binary.LittleEndian}, {m: elf.EM_AARCH64, bo: binary.LittleEndian}, {m: elf.EM_386, bo: binary.LittleEndian},
			{m: elf.EM_RISCV, bo: binary.LittleEndian}, {m: elf.EM_PPC64, bo: binary.LittleEndian}, {m: elf.EM_PPC64, bo: binary.BigEndian}, {m: elf.EM_S390, bo: binary.BigEndian},
			{m: elf.EM_LOONGARCH, bo: binary.LittleEndian}, {m: elf.EM_LOONGARCH, bo: binary.LittleEndian}, {m: elf.EM_LOONGARCH, bo: binary.LittleEndian}, {m: elf.EM_LOONGARCH, bo: binary.LittleEndian},
			{m: elf.EM_ARM, bo: binary.LittleEndian}, {m: elf.EM_RISCV, bo: binary.LittleEndian, rv32: true}, {m: elf.EM_MIPS, bo: binary.BigEndian}, {m: elf.EM_ARM, bo: binary.LittleEndian, thumb: true},
		}
		tg := targets[int(mode&3)|int(mode>>3&3)<<2]
		insts, err := decodeFor(tg.m, tg.bo, tg.rv32, tg.thumb, code, addr, mode&4 != 0, syms)
		if err != nil {
			t.Fatal(err)
		}
		checkCover(t, insts, code, addr)
	})
}

// BenchmarkDecode decodes libc's .text; it reports instructions per second.
func BenchmarkDecode(b *testing.B) {
	f, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	s := f.Section(".text")
	code, err := s.Data()
	if err != nil {
		b.Fatal(err)
	}
	es := newELFSymbols(f)
	for _, intel := range []bool{false, true} {
		name := "att"
		if intel {
			name = "intel"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(code)))
			n := 0
			for b.Loop() {
				insts, _ := Decode(f.Machine, f.ByteOrder, code, s.Addr, intel, es.lookup)
				n += len(insts)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "insts/s")
		})
	}
	// The baseline: GNU objdump on the same section, as upstream pprof
	// runs it (one process, its output parsed line by line).
	b.Run("objdump", func(b *testing.B) {
		tool, err := exec.LookPath("objdump")
		if err != nil {
			b.Skip(err)
		}
		b.SetBytes(int64(len(code)))
		n := 0
		for b.Loop() {
			out, err := exec.Command(tool, "-d", "--no-show-raw-insn", "-j", ".text", "/lib/x86_64-linux-gnu/libc.so.6").Output()
			if err != nil {
				b.Fatal(err)
			}
			n += bytes.Count(out, []byte(":\t"))
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "insts/s")
	})
}

// TestDecodeTableIsObjdumps checks that the texts TestDecode expects are
// objdump's: each case without a Symbolizer is disassembled by objdump as
// raw bytes at the same address.
func TestDecodeTableIsObjdumps(t *testing.T) {
	for _, tt := range decodeTests {
		if tt.sym != nil || len(tt.code) == 0 || tt.notObjdump != "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			tool, arch := "objdump", "i386:x86-64"
			var extra []string
			switch tt.m {
			case elf.EM_386:
				arch = "i386"
			case elf.EM_AARCH64:
				tool, arch = crossObjdump("aarch64-linux-gnu")(t), "aarch64"
			case elf.EM_RISCV:
				tool, arch = crossObjdump("riscv64-linux-gnu")(t), "riscv:rv64"
				if tt.rv32 {
					arch = "riscv:rv32"
				}
			case elf.EM_PPC64:
				tool, arch, extra = crossObjdump("powerpc64le-linux-gnu")(t), "powerpc:common64", []string{"-EL"}
				if tt.bo == binary.BigEndian {
					extra = []string{"-EB"}
				}
			case elf.EM_S390:
				tool, arch = crossObjdump("s390x-linux-gnu")(t), "s390:64-bit"
			case elf.EM_MIPS:
				tool, arch, extra = crossObjdump("mips-linux-gnu")(t), "mips:isa64r2", []string{"-EB", "-M", "gpr-names=32"}
			case elf.EM_ARM:
				tool, arch = crossObjdump("arm-linux-gnueabihf")(t), "arm"
				if tt.thumb {
					extra = []string{"-M", "force-thumb"}
				}
			}
			tool = testenv.Tool(t, tool, "binutils")
			bin := filepath.Join(t.TempDir(), "code.bin")
			if err := os.WriteFile(bin, tt.code, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-D", "-b", "binary", "-m", arch, "--no-show-raw-insn", fmt.Sprintf("--adjust-vma=%#x", tt.addr)}, extra...)
			if tt.intel {
				args = append(args, "-M", "intel")
			}
			want := runObjdump(t, tool, bin, 0, 0, append(args[1:], "-D")...)
			var got []string
			for _, w := range want {
				got = append(got, normalize(w.text))
			}
			var ours []string
			for _, w := range tt.want {
				ours = append(ours, normalize(w))
			}
			if strings.Join(got, "\n") != strings.Join(ours, "\n") {
				t.Errorf("objdump prints %q, the table wants %q", got, ours)
			}
		})
	}
}

// TestDecodeRandomBytes decodes 256 KiB of random bytes for every machine
// and syntax: hostile code decodes completely, in one pass.
func TestDecodeRandomBytes(t *testing.T) {
	code := make([]byte, 256<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range code {
		code[i] = byte(r.Uint32())
	}
	for _, tt := range []struct {
		m     elf.Machine
		intel bool
		bo    binary.ByteOrder
	}{
		{m: elf.EM_X86_64}, {m: elf.EM_X86_64, intel: true}, {m: elf.EM_386}, {m: elf.EM_AARCH64},
		{m: elf.EM_RISCV}, {m: elf.EM_PPC64}, {m: elf.EM_PPC64, bo: binary.BigEndian}, {m: elf.EM_S390},
		{m: elf.EM_LOONGARCH}, {m: elf.EM_ARM},
	} {
		insts, err := Decode(tt.m, tt.bo, code, 0xffffffffff000000, tt.intel, syms)
		if err != nil {
			t.Fatal(err)
		}
		checkCover(t, insts, code, 0xffffffffff000000)
	}
	checkCover(t, DecodeRV32(code, 0xff000000, syms), code, 0xff000000)
}

// TestDecodeSymbolizerPanics checks that a panicking Symbolizer costs only
// the instructions that asked it.
func TestDecodeSymbolizerPanics(t *testing.T) {
	code := []byte{0x90, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3} // nop; call; ret
	insts, err := Decode(elf.EM_X86_64, nil, code, 0x1000, false, func(uint64) (string, uint64, bool) { panic("bad symbolizer") })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range insts {
		got = append(got, in.Text)
	}
	if want := []string{"nop", BadText, "ret"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	checkCover(t, insts, code, 0x1000)
}
