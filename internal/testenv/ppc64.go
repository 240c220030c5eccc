package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// ELFv1File is a big-endian 64-bit PowerPC file of the ELFv1 ABI, whose
// function symbols name descriptors in .opd, not code.
type ELFv1File struct {
	Path string
	// Code gives each function's code address, as objdump labels it
	// (".name", from the descriptor).
	Code map[string]uint64
}

// ELFv1Program compiles a C program of three functions (g, f and _start)
// for big-endian ppc64 with clang 14, whose default ABI there is ELFv1,
// into an object in dir, and links it with GNU ld into an executable; it
// returns both.
func ELFv1Program(t testing.TB, dir string) []ELFv1File {
	t.Helper()
	clang := Tool(t, "clang-14", "clang-14")
	ld := Tool(t, "powerpc64le-linux-gnu-ld", "binutils-powerpc64le-linux-gnu")
	objdump := Tool(t, "powerpc64le-linux-gnu-objdump", "binutils-powerpc64le-linux-gnu")
	src := filepath.Join(dir, "v1.c")
	if err := os.WriteFile(src, []byte("int g(int x) { return x * 3 + 1; }\nint f(int x) { return g(x) + g(x + 1); }\nvoid _start(void) { f(3); for (;;) ; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, exe := filepath.Join(dir, "v1.o"), filepath.Join(dir, "v1")
	for _, c := range [][]string{
		{clang, "--target=powerpc64-linux-gnu", "-O1", "-c", "-o", obj, src},
		{ld, "-EB", "-m", "elf64ppc", "-o", exe, obj},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	var files []ELFv1File
	for _, path := range []string{obj, exe} {
		out, err := exec.Command(objdump, "-d", path).Output()
		if err != nil {
			t.Fatalf("%s -d %s: %v", objdump, path, err)
		}
		f := ELFv1File{Path: path, Code: map[string]uint64{}}
		for _, m := range regexp.MustCompile(`(?m)^([0-9a-f]+) <\.(\w+)>:$`).FindAllSubmatch(out, -1) {
			f.Code[string(m[2])], _ = strconv.ParseUint(string(m[1]), 16, 64)
		}
		if len(f.Code) != 3 {
			t.Fatalf("%s: objdump labels %v, want the code of 3 functions", path, f.Code)
		}
		files = append(files, f)
	}
	return files
}
