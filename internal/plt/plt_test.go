package plt

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// objdumpLabel is a synthetic symbol as objdump -d labels it: "00022010
// <realloc@plt>:".
var objdumpLabel = regexp.MustCompile(`^([0-9a-f]+) <(.+@plt)>:$`)

// TestEntriesMatchObjdump: the stubs Entries names are the ones objdump
// labels "name@plt" in its disassembly of the stub sections,
// at the same addresses with the same names, none more, none fewer, read
// through elfrel where it reads the file and through debug/elf always:
// g++ programs (C++ names, mangled) for x86-64 and 386, position-independent or
// not, Debian's x86-64 libc and libstdc++ (ifunc stubs named
// "*ABS*+0x...@plt"), its 386 libc ("*ABS*@plt": no addend) and its armhf
// libc and libstdc++ (stubs with and without a Thumb entry), its armel
// libc (ARM code), and its arm64, riscv64 and s390x libc.
func TestEntriesMatchObjdump(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const src = "testdata/calls.cc"
	build := func(name string, args ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			out := filepath.Join(dir, name)
			testenv.Run(t, ".", append(append([]string{testenv.Tool(t, "g++", "build-essential"), "-O2"}, args...), "-o", out, src)...)
			return out
		}
	}
	installed := func(path, pkg string) func(t *testing.T) string {
		return func(t *testing.T) string { return testenv.File(t, path, pkg) }
	}
	for _, tt := range []struct {
		name    string
		file    func(t *testing.T) string
		objdump [2]string
		min     int // stubs at least
	}{
		{"g++ PIE", build("p", "-pie"), [2]string{"objdump", "binutils"}, 8},
		{"g++ no-pie", build("p-no-pie", "-no-pie"), [2]string{"objdump", "binutils"}, 8},
		{"g++ -m32 PIE", build("p32", "-m32", "-pie"), [2]string{"objdump", "binutils"}, 8},
		{"g++ -m32 no-pie", build("p32-no-pie", "-m32", "-no-pie"), [2]string{"objdump", "binutils"}, 8},
		{"libc", installed("/lib/x86_64-linux-gnu/libc.so.6", "libc6"), [2]string{"objdump", "binutils"}, 50},
		{"libstdc++", installed("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++6"), [2]string{"objdump", "binutils"}, 1000},
		{"386 libc", installed("/lib32/libc.so.6", "libc6-i386"), [2]string{"objdump", "binutils"}, 20},
		{"armhf libc", installed("/usr/arm-linux-gnueabihf/lib/libc.so.6", "libc6-armhf-cross"), [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"}, 15},
		{"armhf libstdc++", installed("/usr/arm-linux-gnueabihf/lib/libstdc++.so.6", "libstdc++6-armhf-cross"), [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"}, 1000},
		{"arm64 libc", installed("/usr/aarch64-linux-gnu/lib/libc.so.6", "libc6-arm64-cross"), [2]string{"aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu"}, 15},
		{"riscv64 libc", installed("/usr/riscv64-linux-gnu/lib/libc.so.6", "libc6-riscv64-cross"), [2]string{"riscv64-linux-gnu-objdump", "binutils-riscv64-linux-gnu"}, 15},
		{"s390x libc", installed("/usr/s390x-linux-gnu/lib/libc.so.6", "libc6-s390x-cross"), [2]string{"s390x-linux-gnu-objdump", "binutils-s390x-linux-gnu"}, 25},
		{"armel libc", installed("/usr/arm-linux-gnueabi/lib/libc.so.6", "libc6-armel-cross"), [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"}, 15},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file(t)
			objdump := testenv.Tool(t, tt.objdump[0], tt.objdump[1])
			out, err := exec.Command(objdump, "-d", "-j", ".plt", "-j", ".plt.sec", "-j", ".plt.got", file).Output()
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(out), "\n") {
				if m := objdumpLabel.FindStringSubmatch(line); m != nil {
					a, err := strconv.ParseUint(m[1], 16, 64)
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, fmt.Sprintf("%#x %s", a, m[2]))
				}
			}
			if len(want) < tt.min {
				t.Fatalf("objdump labels %d stubs, want at least %d", len(want), tt.min)
			}
			std, err := elf.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer std.Close()
			images := map[string]Image{"debug/elf": FromStd(std)}
			if f, err := elfrel.Open(file); err == nil {
				defer f.Close()
				images["elfrel"] = FromELFRel(f)
			} else if std.Class == elf.ELFCLASS64 {
				t.Fatalf("elfrel: %v", err)
			}
			for reader, img := range images {
				var got []string
				for _, e := range Entries(img) {
					got = append(got, fmt.Sprintf("%#x %s@plt", e.Addr, e.Symbol))
				}
				if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
					t.Errorf("%s: Entries differ from objdump's labels:\n got %d: %.400s\nwant %d: %.400s", reader, len(got), g, len(want), w)
				}
			}
			t.Logf("%d stubs", len(want))
		})
	}
}
