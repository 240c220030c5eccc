package elfrel_test

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

const cSource = `
static int helper(int x) { return x * 3 + 1; }
int alpha(int x) { return helper(x) + 1; }
int beta(int x) { return alpha(x) * 2; }
int gamma_(int x) { return beta(x) - helper(x); }
`

// compilers lists the ways the tests compile C: both compilers, both DWARF
// versions, and objects of the other machines whose relocations are read.
var compilers = []struct {
	name, tool, pkg string
	args            []string
}{
	{name: "clang14-dwarf5", tool: "clang-14", pkg: "clang-14", args: []string{"-gdwarf-5"}},
	{name: "clang14-dwarf4", tool: "clang-14", pkg: "clang-14", args: []string{"-gdwarf-4"}},
	{name: "gcc-dwarf5", tool: "gcc", pkg: "gcc", args: []string{"-gdwarf-5"}},
	{name: "gcc-dwarf4", tool: "gcc", pkg: "gcc", args: []string{"-gdwarf-4"}},
	{name: "clang14-aarch64", tool: "clang-14", pkg: "clang-14", args: []string{"--target=aarch64-linux-gnu", "-gdwarf-5"}},
	{name: "clang14-ppc64-big-endian", tool: "clang-14", pkg: "clang-14", args: []string{"--target=powerpc64-linux-gnu", "-gdwarf-4"}},
	{name: "clang14-s390x", tool: "clang-14", pkg: "clang-14", args: []string{"--target=s390x-linux-gnu", "-gdwarf-4"}}, // debug/dwarf misreads big-endian DWARF 5 strings
	{name: "clang19-riscv64", tool: "clang-19", pkg: "clang-19", args: []string{"--target=riscv64-linux-gnu", "-gdwarf-5"}},
	{name: "clang19-loongarch64", tool: "clang-19", pkg: "clang-19", args: []string{"--target=loongarch64-linux-gnu", "-gdwarf-5"}},
	{name: "gcc-m32", tool: "gcc", pkg: "gcc", args: []string{"-m32", "-gdwarf-4"}},
	{name: "clang14-armv7-thumb", tool: "clang-14", pkg: "clang-14", args: []string{"--target=armv7-linux-gnueabihf", "-mthumb", "-gdwarf-4"}},
	{name: "clang14-ppc32", tool: "clang-14", pkg: "clang-14", args: []string{"--target=powerpc-linux-gnu", "-gdwarf-4"}},
	{name: "clang14-mips64el", tool: "clang-14", pkg: "clang-14", args: []string{"--target=mips64el-linux-gnuabi64", "-gdwarf-5"}},
	{name: "clang14-mips64", tool: "clang-14", pkg: "clang-14", args: []string{"--target=mips64-linux-gnuabi64", "-gdwarf-4"}},
	{name: "clang14-mipsel", tool: "clang-14", pkg: "clang-14", args: []string{"--target=mipsel-linux-gnu", "-gdwarf-4"}},
}

// compileScattered compiles cSource (at -O0, so that every function has
// its own named DW_TAG_subprogram with DW_AT_low_pc) and gives its sections scattered load
// addresses; it returns the object's contents.
func compileScattered(t *testing.T, tool, pkg string, args []string) []byte {
	t.Helper()
	path := testenv.Tool(t, tool, pkg)
	dir := t.TempDir()
	src, obj := filepath.Join(dir, "a.c"), filepath.Join(dir, "a.o")
	if err := os.WriteFile(src, []byte(cSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := synth.Compile(path, append(args, "-O0", "-ffunction-sections", "-c", "-o", obj, src)...); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	opt := synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 30, Seed: 7}
	if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS32 {
		opt.Base, opt.Span = 0x10000000, 1<<28
	}
	if _, err := synth.Scatter(data, opt); err != nil {
		t.Fatal(err)
	}
	return data
}

// dwarfData returns f's relocated DWARF as a *dwarf.Data.
func dwarfData(t *testing.T, f *elfrel.File) *dwarf.Data {
	t.Helper()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	od, err := d.Data()
	if err != nil {
		t.Fatal(err)
	}
	return od
}

// lowPCs returns the DW_AT_low_pc of every subprogram by name.
func lowPCs(t *testing.T, d *dwarf.Data) map[string]uint64 {
	t.Helper()
	m := make(map[string]uint64)
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return m
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && e.Tag == dwarf.TagSubprogram && name != "" {
			m[name] = low
		}
	}
}

// TestStdlibIgnoresSectionAddress shows why this package exists: on an
// object whose sections carry load addresses, debug/elf resolves every
// function's DW_AT_low_pc to an offset in its own section (st_value of the
// section symbol plus the addend), while File.DWARF gives the address the
// function was loaded at.
func TestStdlibIgnoresSectionAddress(t *testing.T) {
	for _, c := range compilers {
		t.Run(c.name, func(t *testing.T) {
			data := compileScattered(t, c.tool, c.pkg, c.args)
			ef, err := elf.NewFile(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			sd, err := ef.DWARF()
			if err != nil {
				t.Fatal(err)
			}
			f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "a.o")
			if err != nil {
				t.Fatal(err)
			}
			std, ours := lowPCs(t, sd), lowPCs(t, dwarfData(t, f))
			for _, fn := range []string{"alpha", "beta", "gamma_"} {
				i := f.Section(".text." + fn)
				if i < 0 {
					t.Fatalf("no section .text.%s", fn)
				}
				want := f.Sections[i].Addr
				if got := ours[fn]; got != want {
					t.Errorf("%s: elfrel low_pc = %#x, want sh_addr %#x", fn, got, want)
				}
				if got := std[fn]; got != 0 {
					t.Errorf("%s: debug/elf low_pc = %#x, want 0 (the section-relative value this package corrects)", fn, got)
				}
			}
		})
	}
}

// TestNonAllocAddressIgnored gives the debug sections non-zero sh_addr
// values, as a host that loads every section would, and checks that the
// relocated DWARF does not change: offsets into .debug_str, .debug_line
// and .debug_abbrev are not addresses.
func TestNonAllocAddressIgnored(t *testing.T) {
	for _, c := range compilers {
		t.Run(c.name, func(t *testing.T) {
			data := compileScattered(t, c.tool, c.pkg, c.args)
			moved := bytes.Clone(data)
			next := uint64(0x500000)
			err := synth.SetAddr(moved, func(s elfrel.Section) (uint64, bool) {
				if s.Flags&elf.SHF_ALLOC != 0 || s.Type != elf.SHT_PROGBITS {
					return 0, false
				}
				next += 0x100000
				return next, true
			})
			if err != nil {
				t.Fatal(err)
			}
			want := relocated(t, data)
			got := relocated(t, moved)
			for name, w := range want {
				if !bytes.Equal(got[name], w) {
					t.Errorf("%s differs when debug sections have non-zero sh_addr", name)
				}
			}
		})
	}
}

func relocated(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "a.o")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string][]byte)
	for _, name := range []string{".debug_info", ".debug_line", ".debug_str_offsets", ".debug_addr", ".debug_rnglists", ".debug_ranges"} {
		m[name] = d.Section(name)
	}
	if len(m[".debug_info"]) == 0 {
		t.Fatal("no .debug_info")
	}
	return m
}

// TestTLSOffsets: the relocations of a thread-local variable's
// DW_AT_location give its offset in the TLS block, the value the ABIs
// define (x86-64's DTPOFF: S + A; PowerPC's and MIPS's DTPREL: S + A -
// 0x8000, whose addend the compiler writes as 0x8000): for variables
// of one object, their symbols' values, offsets in their TLS sections.
// (llvm-dwarfdump cannot be the reference: it prints a location
// expression's bytes unrelocated.)
func TestTLSOffsets(t *testing.T) {
	clang := testenv.Tool(t, "clang-19", "clang-19")
	const src = "__thread int tv = 3;\n__thread int tu = 4;\n__thread long tw;\nint f(void) { return tv + tu + tw; }\n"
	for _, triple := range []string{"x86_64-linux-gnu", "mips64el-linux-gnuabi64", "mips64-linux-gnuabi64", "mipsel-linux-gnu", "mips-linux-gnu",
		"powerpc64le-linux-gnu", "powerpc64-linux-gnu", "powerpc-linux-gnu"} {
		t.Run(triple, func(t *testing.T) {
			dir := t.TempDir()
			c, obj := filepath.Join(dir, "tls.c"), filepath.Join(dir, "tls.o")
			if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := synth.Compile(clang, "--target="+triple, "-gdwarf-4", "-O2", "-c", "-o", obj, c); err != nil {
				t.Fatal(err)
			}
			ef, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			syms, err := ef.Symbols()
			ef.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint64{}
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_TLS {
					want[s.Name] = s.Value
				}
			}
			if want["tu"] == 0 {
				t.Fatalf("TLS symbols %v: want tu at a non-zero offset", want)
			}
			f, err := elfrel.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := map[string]uint64{}
			for r := dwarfData(t, f).Reader(); ; {
				e, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				name, _ := e.Val(dwarf.AttrName).(string)
				loc, ok := e.Val(dwarf.AttrLocation).([]byte)
				if e.Tag != dwarf.TagVariable || !ok || len(loc) < 2 || loc[len(loc)-1] != 0xe0 { // DW_OP_GNU_push_tls_address
					continue
				}
				switch loc[0] {
				case 0x0c: // DW_OP_const4u
					got[name] = uint64(f.ByteOrder.Uint32(loc[1:]))
				case 0x0e: // DW_OP_const8u
					got[name] = f.ByteOrder.Uint64(loc[1:])
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("TLS offsets from DW_AT_location %v, want the symbols' %v", got, want)
			}
		})
	}
}
