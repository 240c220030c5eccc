package cfi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/testenv"
)

// goProgram is a Go program with leaf functions, calls and a goroutine:
// code enough for the runtime's SP-delta table and Go's .debug_frame to
// describe frames of every shape.
const goProgram = `package main

import (
	"fmt"
	"os"
)

//go:noinline
func leaf(n int) int { return n*3 + 1 }

//go:noinline
func mid(n int) int {
	var buf [64]int
	for i := range buf {
		buf[i] = leaf(n + i)
	}
	return buf[n%64]
}

//go:noinline
func top(n int) int {
	s := 0
	for i := 0; i < 3; i++ {
		s += mid(n + i)
	}
	return s
}

func main() {
	done := make(chan int)
	go func() { done <- top(len(os.Args)) }()
	fmt.Println(<-done)
}
`

// TestGoStepMatchesGoDebugFrame: for every instruction of a Go binary of
// amd64 and of arm64, built by the Go that builds jitpprof and by Go
// 1.19, unwinding the frame by the runtime's SP-delta table
// (goStep, what a binary built with -ldflags=-w has) gives the caller's
// stack pointer and the return address that Go's linker's own
// .debug_frame gives (which it writes from the same table, with its
// rules for the link register). The innermost frame is unwound, so that
// arm64's link register case (a frame not allocated yet) is covered.
func TestGoStepMatchesGoDebugFrame(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.go")
	testenv.WriteFile(t, src, []byte(goProgram))
	go119 := testenv.File(t, "/usr/lib/go-1.19/bin/go", "golang-1.19-go")
	for _, tc := range []struct {
		name, gocmd string
		env         []string
		goarch      string
		arch        *Arch
		step        uint64 // instruction alignment
	}{
		{"amd64", "go", nil, "amd64", X86_64, 1},
		{"arm64", "go", nil, "arm64", ARM64, 4},
		// Go 1.19, Debian 12's.
		{"go1.19-amd64", go119, []string{"GOROOT=/usr/lib/go-1.19", "GOTOOLCHAIN=local"}, "amd64", X86_64, 1},
		{"go1.19-arm64", go119, []string{"GOROOT=/usr/lib/go-1.19", "GOTOOLCHAIN=local"}, "arm64", ARM64, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"GOARCH=" + tc.goarch, "CGO_ENABLED=0"}, tc.env...)
			cf, ef := openELF(t, testenv.GoBuild(t, dir, tc.gocmd, src, "prog-"+tc.name, env))
			if cf.goSP == nil {
				t.Fatal("OpenELF did not read the binary's .gopclntab")
			}
			text := ef.Section(".text")
			if text < 0 {
				t.Fatal("no .text")
			}
			const sp, lr = 0x7ff0_0000, 0x0dea_d000
			var regs Regs
			regs.Set(tc.arch.SP, sp)
			regs.Set(tc.arch.FP, sp-8)
			if tc.arch == ARM64 {
				regs.Set(arm64LR, lr)
			}
			mem := func(a uint64) (uint64, bool) { return a * 0x9e3779b97f4a7c15, a >= sp-8 && a < sp+1<<20 }
			lo := ef.Sections[text].Addr
			hi := lo + ef.Sections[text].Size
			compared, leafs, outermost, negative, bad := 0, 0, 0, 0, 0
			for pc := lo; pc < hi; pc += tc.step {
				want, wantRet, _, end, err1 := cf.step(pc, &regs, mem, nil)
				got, gotRet, err2 := cf.goStep(pc, true, &regs, mem, nil)
				switch {
				case errors.Is(err1, ErrNoEntry) && errors.Is(err2, ErrNoEntry):
					continue
				case end && err1 == nil:
					outermost++ // runtime.goexit, _rt0: no caller to agree on
					continue
				case errors.Is(err2, ErrNoEntry) && err1 == nil && belowSP(want, tc.arch, sp):
					// A negative SP delta (syscall.rawVforkSyscall pops its
					// return address into a register), which SPDelta
					// declines: the frame pointer unwinds it instead.
					negative++
					continue
				}
				compared++
				wantSP, _ := want.Get(tc.arch.SP)
				gotSP, _ := got.Get(tc.arch.SP)
				if errors.Is(err1, ErrMemory) && errors.Is(err2, ErrMemory) {
					continue // both read the same slot, outside mem
				}
				if err1 != nil || err2 != nil || gotRet != wantRet || gotSP != wantSP {
					if bad++; bad <= 10 {
						t.Errorf("pc %#x: SP-delta table: ret %#x, sp %#x, %v; .debug_frame: ret %#x, sp %#x, %v", pc, gotRet, gotSP, err2, wantRet, wantSP, err1)
					}
				}
				if gotRet == lr {
					leafs++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d addresses disagree", bad, compared)
			}
			if compared < 50000 || (tc.arch == ARM64 && leafs < 1000) || negative > 8 {
				t.Errorf("compared %d addresses (%d with the return address in the link register), %d with a negative delta", compared, leafs, negative)
			}
			t.Logf("%d addresses agree, %d with the return address in the link register; %d outermost, %d with a negative delta", compared, leafs, outermost, negative)
		})
	}
}

// TestGoStepARM64: a Go function on arm64 whose frame is allocated has
// its return address at the stack pointer and the caller's frame pointer
// below it; at its entry the return address is in the link register,
// which only the innermost (or an interrupted) frame can use.
func TestGoStepARM64(t *testing.T) {
	tab, err := New("go.bin", ARM64, binary.LittleEndian, 8)
	if err != nil {
		t.Fatal(err)
	}
	tab.goSP = func(addr uint64) (int64, int, bool) {
		switch {
		case addr >= 0x401000 && addr < 0x401004: // mid's entry
			return 0, 1, true
		case addr >= 0x401004 && addr < 0x402000: // mid, frame allocated
			return 32, 2, true
		case addr >= 0x402000 && addr < 0x403000: // top
			return 48, 2, true
		}
		return 0, 1, false
	}
	find := func(pc uint64) (*Table, uint64, bool) { return tab, 0, true }
	// mid's frame at 0x7000: saved lr (into top) at 0x7000, top's frame
	// pointer at 0x6ff8; top's frame at 0x7020: saved lr at 0x7020.
	mem := stackMem(0x6ff8, 0x7048, 0x402010, 0, 0, 0, 0x405000)
	var regs Regs
	regs.Set(31, 0x7000)
	regs.Set(29, 0x6ff8)
	regs.Set(30, 0x9999) // mid's last call
	rets, err := Unwind(ARM64, regs, 0x401100, mem, find, 2, nil)
	if err != nil || !slices.Equal(rets, []uint64{0x402010, 0x405000}) {
		t.Errorf("Unwind in mid's body: %#x, %v; want top's and its caller's", rets, err)
	}
	caller, _, err := tab.goStep(0x401100, true, &regs, mem, nil)
	if fp, _ := caller.Get(29); err != nil || fp != 0x7048 {
		t.Errorf("goStep: caller's frame pointer %#x, %v; want the saved 0x7048", fp, err)
	}
	// At mid's entry, sp is top's: the return address is in x30.
	regs.Set(31, 0x7020)
	regs.Set(30, 0x402010)
	rets, err = Unwind(ARM64, regs, 0x401000, mem, find, 2, nil)
	if err != nil || !slices.Equal(rets, []uint64{0x402010, 0x405000}) {
		t.Errorf("Unwind at mid's entry: %#x, %v; want top's and its caller's", rets, err)
	}
	// A caller's frame cannot be in its entry: x30 is not its.
	if _, _, err := tab.goStep(0x401000, false, &regs, mem, nil); !errors.Is(err, ErrNoEntry) {
		t.Errorf("goStep of a caller at delta 0: %v, want ErrNoEntry", err)
	}
}

// belowSP reports whether regs, a caller's registers, have a stack
// pointer lower than a caller's can be of a frame whose stack pointer is
// sp: the frame's SP delta is negative.
func belowSP(regs Regs, arch *Arch, sp uint64) bool {
	v, ok := regs.Get(arch.SP)
	return ok && v < sp+arch.MinCFA
}

// TestGoStepARM64UnderQEMU unwinds real stacks of a Go program for arm64
// built without DWARF (-ldflags=-w: its only table is the runtime's
// SP-delta table), run under qemu-aarch64 and stopped by gdb at the
// entries of main.leaf (a frameless leaf: the return address is in the
// link register) and main.mid (a frame not allocated yet), and at calls
// in main.mid and main.top (frames allocated): from each stop's
// registers and the stack gdb copies, Unwind must give the callers'
// return addresses, in main.mid, main.top and the goroutine's function.
func TestGoStepARM64UnderQEMU(t *testing.T) {
	testenv.Long(t, "builds a Go program for arm64 and runs it under qemu and gdb")
	qemu := testenv.Tool(t, "qemu-aarch64", "qemu-user")
	gdb := testenv.Tool(t, "gdb-multiarch", "gdb-multiarch")
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.go")
	testenv.WriteFile(t, src, []byte(goProgram))
	bin := testenv.GoBuild(t, dir, "go", src, "prog", []string{"GOARCH=arm64", "CGO_ENABLED=0"}, "-ldflags=-w")
	cf, ef := openELF(t, bin)
	if len(cf.fdes) != 0 || cf.goSP == nil {
		t.Fatalf("%d frame description entries, SP-delta table %v: want only the table", len(cf.fdes), cf.goSP != nil)
	}
	gt, err := gopclntab.OpenELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	fn := map[string]elfrel.Symbol{}
	for _, s := range syms {
		fn[s.Name] = s
	}
	text := ef.Section(".text")
	code, err := ef.SectionData(text)
	if err != nil {
		t.Fatal(err)
	}
	// firstBL is the address of the first bl instruction of function name.
	firstBL := func(name string) uint64 {
		s := fn[name]
		for a := s.Value; a < s.Value+s.Size; a += 4 {
			off := a - ef.Sections[text].Addr
			if binary.LittleEndian.Uint32(code[off:])>>26 == 0x25 {
				return a
			}
		}
		t.Fatalf("no bl in %s", name)
		return 0
	}
	stops := []gdbStop{
		{"top's call", firstBL("main.top"), []string{"main.main.func1"}},
		{"mid's entry", fn["main.mid"].Value, []string{"main.top", "main.main.func1"}},
		{"mid's call", firstBL("main.mid"), []string{"main.top", "main.main.func1"}},
		{"leaf's entry", fn["main.leaf"].Value, []string{"main.mid", "main.top", "main.main.func1"}},
	}
	// qemu's gdb stub now and then stops answering or drops the
	// connection (as the Go program starts threads under qemu-user, in
	// about one run of 20): each run is bounded, and tried again.
	var out []byte
	for try := 1; ; try++ {
		var err error
		out, err = gdbStops(t, qemu, gdb, bin, dir, stops)
		if err == nil {
			break
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errStubLost) || try == 3 {
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("try %d: %v\n%s", try, err, out)
	}
	chunks := strings.Split(string(out), "STOP ")[1:]
	if len(chunks) != len(stops) {
		t.Fatalf("gdb stopped %d times, want %d:\n%s", len(chunks), len(stops), out)
	}
	find := func(pc uint64) (*Table, uint64, bool) { return cf.Table, 0, true }
	stopAt := map[uint64]int{}
	for k, s := range stops {
		stopAt[s.pc] = k
	}
	for i, chunk := range chunks {
		var regs Regs
		var pc uint64
		for _, line := range strings.Split(chunk, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			v, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
			if err != nil {
				continue
			}
			switch f[0] {
			case "x29":
				regs.Set(29, v)
			case "x30":
				regs.Set(30, v)
			case "sp":
				regs.Set(31, v)
			case "pc":
				pc = v
			}
		}
		k, ok := stopAt[pc]
		if !ok {
			t.Fatalf("gdb stopped at %#x, at no breakpoint:\n%s", pc, chunk)
		}
		s := stops[k]
		stack, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("stack%d.bin", i)))
		if err != nil {
			t.Fatal(err)
		}
		sp, _ := regs.Get(31)
		mem := func(a uint64) (uint64, bool) {
			if a < sp || a-sp+8 > uint64(len(stack)) {
				return 0, false
			}
			return binary.LittleEndian.Uint64(stack[a-sp:]), true
		}
		rets, _ := Unwind(ARM64, regs, pc, mem, find, len(s.want), nil)
		var got []string
		for _, r := range rets {
			if fr := gt.Frames(r - 1); len(fr) > 0 {
				got = append(got, fr[len(fr)-1].Func)
			} else {
				got = append(got, fmt.Sprintf("%#x", r))
			}
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("at %s (%#x): callers %q, want %q", s.name, pc, got, s.want)
		}
	}
}

// A gdbStop is where TestGoStepARM64UnderQEMU stops the program.
type gdbStop struct {
	name string
	pc   uint64
	want []string // the functions of the return addresses
}

// gdbStops runs bin under qemu-aarch64 and gdb, which stops it at each
// of stops in turn, printing "STOP i" and the registers and dumping
// 4 KiB of stack into dir/stackI.bin; it gives up after 30 s
// (context.DeadlineExceeded), ending both, and says when qemu dropped
// the connection (errStubLost).
func gdbStops(t *testing.T, qemu, gdb, bin, dir string, stops []gdbStop) ([]byte, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := exec.CommandContext(ctx, qemu, "-g", port, bin)
	q.Dir = dir // where a crash's core file goes, as gdb's below
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { q.Process.Kill(); q.Wait() }()
	args := []string{"-nx", "-batch", "-ex", "set pagination off", "-ex", "set confirm off"}
	// qemu listens once it has loaded the program: retry the connection.
	args = append(args, "-ex", "set tcp connect-timeout 30", "-ex", "target remote 127.0.0.1:"+port)
	for _, s := range stops {
		args = append(args, "-ex", fmt.Sprintf("break *%#x", s.pc))
	}
	for i := range stops {
		args = append(args, "-ex", "continue", "-ex", fmt.Sprintf("echo STOP %d\\n", i),
			"-ex", "info registers x29 x30 sp pc",
			"-ex", fmt.Sprintf("dump binary memory %s $sp $sp+4096", filepath.Join(dir, fmt.Sprintf("stack%d.bin", i))))
	}
	g := exec.CommandContext(ctx, gdb, append(args, "-ex", "kill")...)
	g.Dir, g.WaitDelay = dir, time.Second
	out, err := g.CombinedOutput()
	if ctx.Err() != nil {
		return out, fmt.Errorf("%v: %w", g.Args, ctx.Err())
	}
	if err != nil {
		return out, fmt.Errorf("%v: %w", g.Args, err)
	}
	if bytes.Contains(out, []byte("Remote communication error")) {
		return out, fmt.Errorf("%v: %w", g.Args, errStubLost)
	}
	return out, nil
}

// errStubLost: qemu's gdb stub dropped the connection (as it now and
// then does when the program starts a thread).
var errStubLost = errors.New("qemu's gdb stub dropped the connection")
