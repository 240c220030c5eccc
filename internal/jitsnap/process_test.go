//go:build linux

package jitsnap

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/procfs"
	"github.com/jitpprof/pprof/internal/testenv"
	"github.com/jitpprof/pprof/profile"
	"golang.org/x/sys/unix"
)

// Environment variables that make the test binary a helper process:
// helperEnv snapshots the pid in it, prints the error and exits (for
// tests that need another user's credentials); nonDumpableEnv makes
// itself non-dumpable, prints "ready" and sleeps.
const (
	helperEnv      = "JITSNAP_TEST_SNAPSHOT_PID"
	nonDumpableEnv = "JITSNAP_TEST_NON_DUMPABLE"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(helperEnv); s != "" {
		pid, _ := strconv.Atoi(s)
		_, err := Snapshot(pid, os.DevNull)
		fmt.Println(err)
		os.Exit(0)
	}
	if os.Getenv(nonDumpableEnv) != "" {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hostBuild is testdata/mcjit's MCJIT host and its bitcode.
type hostBuild struct {
	bin string   // bin/jit_host
	bc  []string // build/workload{1,2}.bc
}

// buildHost builds the MCJIT host with testdata/mcjit/generate.sh
// --build-only.
func buildHost(t *testing.T) hostBuild {
	t.Helper()
	for _, tool := range [][2]string{
		{"clang-14", "clang-14"}, {"llvm-config-14", "llvm-14-dev"}, {"llvm-symbolizer-14", "llvm-14"},
		{"g++", "g++"}, {"python3", "python3"},
	} {
		testenv.Tool(t, tool[0], tool[1])
	}
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "generate.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the MCJIT fixture generator is missing: %v", err)
	}
	out := t.TempDir()
	log, err := exec.Command(script, "--build-only", out).CombinedOutput()
	if err != nil {
		t.Fatalf("generate.sh --build-only: %v\n%s", err, log)
	}
	b := hostBuild{
		bin: filepath.Join(out, "bin", "jit_host"),
		bc:  []string{filepath.Join(out, "build", "workload1.bc"), filepath.Join(out, "build", "workload2.bc")},
	}
	for _, f := range append([]string{b.bin}, b.bc...) {
		if _, serr := os.Stat(f); serr != nil {
			t.Fatalf("generate.sh did not build %s (%v):\n%s", f, serr, log)
		}
	}
	return b
}

// startHost runs the host with --hold until the test ends and returns
// its pid once it has printed READY. With dump, its own dump listener
// writes out/jit too.
func startHost(t *testing.T, b hostBuild, out string, dump bool) int {
	t.Helper()
	args := []string{"--hold", "--out", out, "--seconds", "0.05", "--threads", "1"}
	if !dump {
		args = append(args, "--no-dump")
	}
	cmd := exec.Command(b.bin, append(args, b.bc...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close() // end of file: the host exits
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "READY ") {
				ready <- sc.Text()
			}
		}
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	select {
	case line := <-ready:
		pid, err := strconv.Atoi(strings.TrimPrefix(line, "READY "))
		if err != nil || pid != cmd.Process.Pid {
			t.Fatalf("host printed %q, want READY %d", line, cmd.Process.Pid)
		}
		return pid
	case err := <-exited:
		t.Fatalf("host exited before READY (%v):\n%s", err, stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("host not READY after 2 minutes:\n%s", stderr.String())
	}
	return 0
}

func TestSnapshotMCJIT(t *testing.T) {
	if testing.Short() && !testenv.InCI() {
		t.Skip("builds and runs an MCJIT host; skipped in -short mode")
	}
	b := buildHost(t)

	t.Run("gdb interface only", func(t *testing.T) {
		pid := startHost(t, b, t.TempDir(), false)
		dir := filepath.Join(t.TempDir(), "snap")
		res, err := Snapshot(pid, dir)
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		checkDescriptor(t, pid, res)
		if len(res.Written) < 2 || len(res.Unchanged) != 0 || len(res.Skipped) != 0 {
			t.Fatalf("got %d written, %d unchanged, %d skipped (%v); want >= 2 written", len(res.Written), len(res.Unchanged), len(res.Skipped), res.Skipped)
		}
		checkObjects(t, pid, dir, res.Written)

		again, err := Snapshot(pid, dir)
		if err != nil {
			t.Fatalf("second Snapshot: %v", err)
		}
		if len(again.Written) != 0 || len(again.Unchanged) != len(res.Written) {
			t.Errorf("second snapshot: got %d written, %d unchanged; want 0, %d", len(again.Written), len(again.Unchanged), len(res.Written))
		}
		set, errs := profile.Load([]string{dir})
		if len(errs) != 0 || len(set.Objects) != len(res.Written) {
			t.Errorf("profile.Load: got %d objects, errors %v; want %d, none", len(set.Objects), errs, len(res.Written))
		}
	})

	t.Run("same as the dump listener", func(t *testing.T) {
		out := t.TempDir()
		pid := startHost(t, b, out, true)
		dir := filepath.Join(t.TempDir(), "snap")
		res, err := Snapshot(pid, dir)
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		listener := filepath.Join(out, "jit")
		compareDirs(t, listener, dir)
		// Into the listener's directory: the same names, nothing to do.
		res2, err := Snapshot(pid, listener)
		if err != nil || len(res2.Written) != 0 || len(res2.Unchanged) != len(res.Written) {
			t.Errorf("snapshot into the listener's directory: got %d written, %d unchanged, %v; want 0, %d", len(res2.Written), len(res2.Unchanged), err, len(res.Written))
		}
	})
}

// checkDescriptor checks the descriptor address against the simplest
// independent computation, valid for a library whose first PT_LOAD has
// p_vaddr = p_offset = 0: the start of its mapping at file offset 0 plus
// the symbol value.
func checkDescriptor(t *testing.T, pid int, res *Result) {
	t.Helper()
	if len(res.Descriptors) != 1 {
		t.Fatalf("got descriptors %+v, want one", res.Descriptors)
	}
	d := res.Descriptors[0]
	t.Logf("%s at %#x, %s at %#x, in %s", descriptorSymbol, d.Addr, registerCodeSymbol, d.RegisterCode, d.Object)
	f, err := elfrel.Open(d.Object)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := findSymbols(f, maxSymbolNames, descriptorSymbol)
	if err != nil {
		t.Fatal(err)
	}
	segs := loadSegments(f)
	if segs[0].Vaddr != 0 || segs[0].Off != 0 {
		t.Logf("%s's first segment is not at 0; no simple cross-check of the descriptor address", d.Object)
		return
	}
	text, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	maps, _ := procfs.ParseMaps(bytes.NewReader(text))
	for _, m := range maps {
		if m.Path == d.Object && m.Offset == 0 {
			if want := m.Start + syms[descriptorSymbol].Value; d.Addr != want {
				t.Errorf("got descriptor at %#x, want %#x (mapping %v + value %#x)", d.Addr, want, m, syms[descriptorSymbol].Value)
			}
			return
		}
	}
	t.Errorf("no mapping of %s at offset 0", d.Object)
}

// checkObjects checks the written objects: valid ET_REL files whose
// loaded executable sections lie in executable mappings of the process.
func checkObjects(t *testing.T, pid int, dir string, objs []Object) {
	t.Helper()
	text, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	maps, _ := procfs.ParseMaps(bytes.NewReader(text))
	for _, o := range objs {
		f, err := elf.Open(filepath.Join(dir, o.Name+ElfExt))
		if err != nil {
			t.Errorf("%s: %v", o.Name, err)
			continue
		}
		if f.Type != elf.ET_REL {
			t.Errorf("%s: got type %v, want ET_REL", o.Name, f.Type)
		}
		code := 0
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
				continue
			}
			if s.Addr == 0 {
				t.Errorf("%s: executable section %s has address 0", o.Name, s.Name)
				continue
			}
			code++
			if i := slices.IndexFunc(maps, func(m Mapping) bool {
				return m.Executable() && m.Start <= s.Addr && s.Addr+s.Size <= m.Limit
			}); i < 0 {
				t.Errorf("%s: section %s [%#x, +%#x) is in no executable mapping", o.Name, s.Name, s.Addr, s.Size)
			}
		}
		f.Close()
		if code == 0 {
			t.Errorf("%s: no executable section with code", o.Name)
		}
	}
}

// compareDirs checks that the snapshot holds exactly the listener's
// objects: the same names, byte-identical .elf files, and .meta files
// listing the same sections.
func compareDirs(t *testing.T, listener, snap string) {
	t.Helper()
	names := func(dir string) []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	want, got := names(listener), names(snap)
	if !slices.Equal(got, want) || len(got) < 4 {
		t.Fatalf("snapshot has files %v, the listener %v; want the same, at least 2 objects", got, want)
	}
	identicalMeta := 0
	for _, name := range want {
		l, _ := os.ReadFile(filepath.Join(listener, name))
		s, _ := os.ReadFile(filepath.Join(snap, name))
		switch filepath.Ext(name) {
		case ElfExt:
			if !bytes.Equal(l, s) {
				t.Errorf("%s: the snapshot's %d bytes differ from the listener's %d", name, len(s), len(l))
			}
		case MetaExt:
			lm, err1 := profile.ParseMeta(bytes.NewReader(l))
			sm, err2 := profile.ParseMeta(bytes.NewReader(s))
			if err1 != nil || err2 != nil || !slices.Equal(lm, sm) {
				t.Errorf("%s: sections differ (%v, %v):\nlistener %+v\nsnapshot %+v", name, err1, err2, lm, sm)
			}
			if bytes.Equal(l, s) {
				identicalMeta++
			}
		}
	}
	t.Logf("%d objects byte-identical to the listener's; %d of their .meta files byte-identical too", len(want)/2, identicalMeta)
}

func TestSnapshotErrors(t *testing.T) {
	pidMax := 4194304
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		pidMax, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	sleep := startProcess(t, "sleep", "60")
	zombie := startProcess(t, "true")
	waitZombie(t, zombie)

	tests := []struct {
		name     string
		pid      int
		wantKind error
		want     []string
	}{
		{name: "no such pid", pid: pidMax, wantKind: ErrNoProcess, want: []string{fmt.Sprintf("pid %d: no such process (nothing at /proc/%d)", pidMax, pidMax), "check the pid"}},
		{name: "pid 0", pid: 0, wantKind: ErrNoProcess, want: []string{"not a process id"}},
		{name: "negative pid", pid: -5, wantKind: ErrNoProcess, want: []string{"not a process id"}},
		{name: "not a JIT", pid: sleep, wantKind: ErrNoInterface, want: []string{
			fmt.Sprintf("pid %d: no GDB JIT interface: none of the", sleep), "defines __jit_debug_descriptor in .symtab or .dynsym",
			"does not use LLVM's GDB registration", "statically linked and stripped"}},
		{name: "zombie", pid: zombie, wantKind: ErrNoProcess, want: []string{"maps is empty", "zombie"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			res, err := Snapshot(tt.pid, dir)
			if !errors.Is(err, tt.wantKind) {
				t.Fatalf("got %v, %v; want %v", res, err, tt.wantKind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got error %q, want it to contain %q", err, w)
				}
			}
			if _, serr := os.Stat(dir); serr == nil {
				t.Errorf("%s was created for a failed snapshot", dir)
			}
		})
	}
}

// TestSnapshotEmptyList snapshots a process whose GDB JIT interface holds
// no object, as an ORC JIT without debugger support has it: the error must
// name that cause and its fix, not only "nothing compiled yet".
func TestSnapshotEmptyList(t *testing.T) {
	cc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "empty.c")
	os.WriteFile(src, []byte(`#include <stdint.h>
#include <unistd.h>
struct jit_code_entry { struct jit_code_entry *next, *prev; const char *symfile_addr; uint64_t symfile_size; };
struct jit_descriptor { uint32_t version, action_flag; struct jit_code_entry *relevant_entry, *first_entry; };
struct jit_descriptor __jit_debug_descriptor = {1, 0, 0, 0};
__attribute__((noinline, used)) void __jit_debug_register_code(void) { __asm__ volatile(""); }
int main(void) { write(1, "ready\n", 6); pause(); return 0; }
`), 0o644)
	bin := filepath.Join(dir, "empty")
	if out, err := exec.Command(cc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("building the target: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	startReady(t, cmd)
	_, err := Snapshot(cmd.Process.Pid, filepath.Join(dir, "snap"))
	if !errors.Is(err, ErrNoObjects) {
		t.Fatalf("got %v, want ErrNoObjects", err)
	}
	for _, want := range []string{"is empty", "not compiled anything yet", "ORC JIT without debugger support",
		"enableDebuggerSupport", "createJITLoaderGDBRegistrar", "llvm_orc_registerJITLoaderGDBWrapper", "-rdynamic"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got error %q, want it to contain %q", err, want)
		}
	}
}

// TestSnapshot32Bit snapshots a 32-bit process: a GOARCH=386 build of a
// program that sleeps.
func TestSnapshot32Bit(t *testing.T) {
	goTool := testenv.Tool(t, "go", "golang-go")
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\n\nimport \"time\"\n\nfunc main() { time.Sleep(time.Minute) }\n"), 0o644)
	bin := filepath.Join(dir, "sleep32")
	build := exec.Command(goTool, "build", "-o", bin, src)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=386", "CGO_ENABLED=0", "GOFLAGS=")
	if cache, err := exec.Command(goTool, "env", "GOCACHE").Output(); err != nil || os.MkdirAll(strings.TrimSpace(string(cache)), 0o755) != nil {
		build.Env = append(build.Env, "GOCACHE="+filepath.Join(dir, "gocache")) // no usable home directory
	}
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a 32-bit program: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		testenv.Missing(t, "IA32 emulation (running 32-bit programs)", fmt.Sprintf("a kernel with CONFIG_IA32_EMULATION: %v", err))
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	_, err := Snapshot(cmd.Process.Pid, filepath.Join(dir, "snap"))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "is a 32-bit program (ELFCLASS32)") {
		t.Errorf("got %v, want ErrUnsupported for a 32-bit program", err)
	}
}

// TestSnapshotPermission snapshots a process the caller may not read:
// as root, a root process, from a copy of this test binary running as
// nobody; as anyone else, a non-dumpable child.
func TestSnapshotPermission(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), nonDumpableEnv+"=1")
		startReady(t, cmd)
		_, err := Snapshot(cmd.Process.Pid, t.TempDir())
		if err == nil {
			t.Skip("a non-dumpable process is readable here (CAP_SYS_PTRACE?); nothing to test")
		}
		checkPermissionError(t, err, cmd.Process.Pid, "the process is not dumpable")
		return
	}
	target := startProcess(t, "sleep", "60")
	dir, err := os.MkdirTemp("", "jitsnap-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, "jitsnap.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", helperEnv, target))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the test binary as nobody: %v\n%s", err, out)
	}
	checkPermissionError(t, errors.New(strings.TrimSpace(string(out))), target,
		"the process belongs to uid 0 and you are uid 65534: run jitsnap as that user or as root (or with CAP_SYS_PTRACE)")
}

func checkPermissionError(t *testing.T, err error, pid int, hint string) {
	t.Helper()
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("pid %d: reading /proc/%d/maps: permission denied; ", pid, pid), hint} {
		if !strings.Contains(msg, want) {
			t.Errorf("got %q, want it to contain %q", msg, want)
		}
	}
	t.Logf("permission error: %s", msg)
}

// startReady starts cmd for the length of the test and waits until it
// prints "ready" on its standard output.
func startReady(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("%s said %q, want ready", cmd.Path, line)
	}
}

// startProcess starts a command for the length of the test and returns
// its pid; it is killed (by its pid) and reaped at the end.
func startProcess(t *testing.T, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		testenv.Missing(t, name, fmt.Sprintf("cannot start it: %v", err))
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// waitZombie waits until process pid has exited but is not yet reaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not become a zombie", pid)
}

// TestOpenMappedFIFO: a process can replace a file it has mapped by a
// FIFO of the same name; opening the name again must not block jitsnap.
// The mapped file is still reached through /proc/PID/map_files when the
// caller may read it (root), and otherwise the file is reported.
func TestOpenMappedFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libmapped.so")
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xc3}, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(fd.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE)
	fd.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	p := &process{pid: os.Getpid()}
	if err := p.readMaps(); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.maps, func(m Mapping) bool { return m.Path == path })
	if i < 0 {
		t.Fatalf("%s is not in /proc/self/maps", path)
	}
	m := p.maps[i]
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, _, err := p.openMapped(m)
		if err == nil {
			fi, serr := f.Stat()
			if ino, ok := fileInode(fi); serr != nil || !ok || ino != m.Inode {
				err = fmt.Errorf("opened inode %d, want the mapped %d", ino, m.Inode)
			}
			f.Close()
		} else if !strings.Contains(err.Error(), "not a regular file") {
			err = fmt.Errorf("error does not say the name is no longer a regular file: %w", err)
		} else {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("openMapped blocked on the FIFO put in the mapped file's place")
	}
}
