package driver

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJITFlagsRefused checks that explicit JIT flag values that cannot be
// honoured end the run with an error naming the value, before any profile
// is fetched or any output written, and that the usable values still run.
func TestJITFlagsRefused(t *testing.T) {
	golden := goldenRun(t)
	jitDir := filepath.Join(golden, "jit")
	prof := filepath.Join(golden, "heap.prof")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pidMax := 4194304
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		pidMax, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}

	tests := []struct {
		name    string
		flags   []string
		wantErr string // "" for success
	}{
		{name: "unknown symbolizer", flags: []string{"-jit_symbolizer=bogus"}, wantErr: `-jit_symbolizer="bogus": unknown value, want inprocess or binutils`},
		{name: "missing directory", flags: []string{"-jit_dir=/nonexistent"}, wantErr: `-jit_dir="/nonexistent": stat /nonexistent: no such file or directory`},
		{name: "good and missing directory", flags: []string{"-jit_dir=" + jitDir + ",/nonexistent2"}, wantErr: `-jit_dir="/nonexistent2"`},
		{name: "repeated, second missing", flags: []string{"-jit_dir", jitDir, "-jit_dir", "/nonexistent3"}, wantErr: `-jit_dir="/nonexistent3"`},
		{name: "not a directory", flags: []string{"-jit_dir=" + file}, wantErr: strconv.Quote(file) + ": not a directory"},
		{name: "no such process", flags: []string{"-jit_pid=" + strconv.Itoa(pidMax)}, wantErr: "-jit_pid=" + strconv.Itoa(pidMax) + ": no such process"},
		{name: "negative pid", flags: []string{"-jit_pid=-3"}, wantErr: "-jit_pid=-3: not a process id"},
		{name: "binutils", flags: []string{"-jit_symbolizer=binutils", "-jit_dir=" + jitDir}},
		{name: "inprocess", flags: []string{"-jit_symbolizer=inprocess", "-jit_dir=" + jitDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ui := &testUI{}
			w := &memWriter{files: map[string]*bytes.Buffer{}}
			args := append(append([]string{"-proto", "-output", "out.pb.gz"}, tt.flags...), prof)
			err := PProf(&Options{
				Flagset: NewFlagSet("pprof", args, flag.ContinueOnError),
				UI:      ui,
				Writer:  w,
				Getenv:  func(string) string { return "" },
			})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				if w.files["out.pb.gz"] == nil {
					t.Errorf("no output written")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			if len(w.files) > 0 {
				t.Errorf("output written despite the error: %v", w.files)
			}
			if msgs := ui.mentioning("JIT objects: using"); len(msgs) > 0 {
				t.Errorf("reported JIT objects as used despite the error: %q", msgs)
			}
		})
	}
}
