package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsnap"
)

// runMainEnv makes the test binary run main, so that tests see the real
// exit status.
const runMainEnv = "JITSNAP_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		main()
		os.Exit(99) // main always exits itself
	}
	os.Exit(m.Run())
}

// absentPID returns a pid no process has: pid_max (pids stay below it).
func absentPID(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skipf("no /proc/sys/kernel/pid_max: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("jitsnap reads /proc")
	}
	absent := absentPID(t)
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatalf("cannot start sleep: %v", err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	out := t.TempDir()

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "no arguments", wantCode: 2, wantStderr: "jitsnap: -pid PID is required"},
		{name: "zero pid", args: []string{"-pid", "0"}, wantCode: 2, wantStderr: "-pid PID is required"},
		{name: "bad pid", args: []string{"-pid", "x"}, wantCode: 2, wantStderr: `invalid value "x" for flag -pid`},
		{name: "unknown flag", args: []string{"-frob"}, wantCode: 2, wantStderr: "flag provided but not defined: -frob"},
		{name: "extra argument", args: []string{"-pid", "5", "extra"}, wantCode: 2, wantStderr: "unexpected arguments: extra"},
		{name: "empty directory", args: []string{"-pid", "5", "-o", ""}, wantCode: 2, wantStderr: "-o DIR must not be empty"},
		{name: "help", args: []string{"-h"}, wantCode: 0, wantStdout: "usage: jitsnap -pid PID [-o DIR]"},
		{
			name: "no such process", args: []string{"-pid", strconv.Itoa(absent), "-o", out}, wantCode: 1,
			wantStderr: fmt.Sprintf("jitsnap: pid %d: no such process", absent),
		},
		{
			name: "not a JIT", args: []string{"-pid", strconv.Itoa(sleep.Process.Pid), "-o", out}, wantCode: 1,
			wantStderr: fmt.Sprintf("jitsnap: pid %d: no GDB JIT interface", sleep.Process.Pid),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("got exit status %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("got stdout %q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("got stderr %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
			if n := strings.Count(stderr.String()+stdout.String(), "usage: jitsnap"); n > 1 {
				t.Errorf("usage text printed %d times, want at most once (stdout %q, stderr %q)", n, stdout.String(), stderr.String())
			}
			if tt.wantCode == 0 && stderr.Len() > 0 {
				t.Errorf("got stderr %q, want nothing", stderr.String())
			}
			if tt.wantCode == 2 && !strings.Contains(stderr.String()+stdout.String(), "usage: jitsnap") && tt.name != "empty directory" {
				t.Errorf("usage error without the usage text: %q", stderr.String())
			}
		})
	}
}

func TestReport(t *testing.T) {
	obj := jitsnap.Object{Name: "workload.c-0123456789abcdef", Size: 17648, Sections: make([]elfrel.Section, 41)}
	skip := &jitsnap.ObjectError{Entry: 0x2000, Symfile: 0x3000, Size: 10, Err: errors.New("bad")}
	desc := jitsnap.Descriptor{Addr: 0x7fd1e84dbb50, RegisterCode: 0x7fd1e44f0810, Object: "/lib/libLLVM-14.so.1", Order: binary.LittleEndian}
	tests := []struct {
		name       string
		res        jitsnap.Result
		quiet      bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{
			name:     "written and unchanged",
			res:      jitsnap.Result{PID: 7, Dir: "d", Descriptors: []jitsnap.Descriptor{desc}, Written: []jitsnap.Object{obj}, Unchanged: []jitsnap.Object{obj}},
			wantCode: 0,
			wantStdout: "pid 7: __jit_debug_descriptor at 0x7fd1e84dbb50, __jit_debug_register_code at 0x7fd1e44f0810 (/lib/libLLVM-14.so.1)\n" +
				"wrote d/workload.c-0123456789abcdef.elf (17648 bytes, 41 sections)\n" +
				"unchanged d/workload.c-0123456789abcdef.elf\n" +
				"pid 7: 1 written, 1 unchanged, 0 skipped in d\n",
		},
		{
			name:       "some skipped",
			res:        jitsnap.Result{PID: 7, Dir: "d", Written: []jitsnap.Object{obj}, Skipped: []*jitsnap.ObjectError{skip}},
			quiet:      true,
			wantCode:   0,
			wantStderr: "jitsnap: pid 7: skipped entry 0x2000: symfile 0x3000 size 10: bad\n",
		},
		{
			name:     "all skipped",
			res:      jitsnap.Result{PID: 7, Dir: "d", Skipped: []*jitsnap.ObjectError{skip}},
			quiet:    true,
			wantCode: 1,
			wantStderr: "jitsnap: pid 7: skipped entry 0x2000: symfile 0x3000 size 10: bad\n" +
				"jitsnap: pid 7: no valid JIT object among 1 entries\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := report(&stdout, &stderr, &tt.res, tt.quiet)
			if code != tt.wantCode || stdout.String() != filepath.FromSlash(tt.wantStdout) || stderr.String() != tt.wantStderr {
				t.Errorf("got %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

// TestExitStatus runs the command as a process to see its real exit
// status.
func TestExitStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("jitsnap reads /proc")
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{args: []string{"-h"}, want: 0},
		{args: []string{"-pid", strconv.Itoa(absentPID(t)), "-o", t.TempDir()}, want: 1},
		{args: []string{"-pid", "x"}, want: 2},
	} {
		cmd := exec.Command(os.Args[0], tt.args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.want {
			t.Errorf("jitsnap %s: got exit status %d, want %d", strings.Join(tt.args, " "), code, tt.want)
		}
	}
}

// TestInstallName checks that go install names the binary jitsnap.
func TestInstallName(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}} {{.Target}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 || f[0] != "main" || f[1] != "github.com/jitpprof/pprof/cmd/jitsnap" ||
		strings.TrimSuffix(filepath.Base(f[2]), ".exe") != "jitsnap" {
		t.Errorf("go list: got %q, want package main github.com/jitpprof/pprof/cmd/jitsnap installed as jitsnap", out)
	}
}
