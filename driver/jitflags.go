package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Values of -jit_symbolizer.
const (
	jitSymInProcess = "inprocess"
	jitSymBinutils  = "binutils"
)

// jitUsage is the help text for the JIT flags.
const jitUsage = `  JIT code (jitpprof):
    -jit_dir              Directories holding JIT objects (NAME.elf, with its
                          NAME.meta if any; perf-PID.map; jit-PID.dump)
                          Comma- or path-list-separated; may be repeated.
                          Default: $PPROF_JIT_DIR, else the first of the
                          profile's directory, the current directory and
                          /pprof_meta that holds JIT objects.
    -jit_symbolizer       How JIT objects are symbolized: inprocess (default:
                          read each object once, in pprof) or binutils (left
                          to pprof's symbolizer and its object tool; see
                          -objtool)
    -jit_pid              Snapshot the JIT objects of this live process through
                          the GDB JIT interface (as jitsnap does) and use them
    -jit_any_owner        Use perf maps and jitdumps whoever owns them. By
                          default, as perf does, those neither you nor root
                          own are not used: anyone can write /tmp/perf-PID.map.`

// jitFlags are the JIT stage's flags.
type jitFlags struct {
	dir      *[]*string // -jit_dir, each occurrence
	sym      *string    // -jit_symbolizer
	pid      *int       // -jit_pid
	anyOwner *bool      // -jit_any_owner
}

// defineJITFlags defines the JIT flags on flags.
func defineJITFlags(flags *flagRecorder) jitFlags {
	flags.AddExtraUsage(jitUsage)
	return jitFlags{
		dir:      flags.StringList("jit_dir", "", "Directories holding JIT objects (NAME.elf [+ NAME.meta], perf-*.map, jit-*.dump)"),
		sym:      flags.String("jit_symbolizer", jitSymInProcess, "How JIT objects are symbolized: inprocess or binutils"),
		pid:      flags.Int("jit_pid", 0, "Snapshot the JIT objects of this live process and use them"),
		anyOwner: flags.Bool("jit_any_owner", false, "Use perf maps and jitdumps that neither you nor root own"),
	}
}

// check refuses explicit JIT flag values that cannot be honoured: an
// unknown -jit_symbolizer, a -jit_dir that is not a directory, a -jit_pid
// that names no process. It runs once, right after parsing, before any
// profile is fetched. ($PPROF_JIT_DIR is a default, not a request: its
// missing directories stay warnings.)
func (f jitFlags) check() error {
	switch *f.sym {
	case jitSymInProcess, jitSymBinutils:
	default:
		return fmt.Errorf("-jit_symbolizer=%q: unknown value, want %s or %s", *f.sym, jitSymInProcess, jitSymBinutils)
	}
	for _, v := range *f.dir {
		for _, d := range splitDirs(*v) {
			fi, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("-jit_dir=%q: %w", d, err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("-jit_dir=%q: not a directory", d)
			}
		}
	}
	switch pid := *f.pid; {
	case pid < 0:
		return fmt.Errorf("-jit_pid=%d: not a process id", pid)
	case pid > 0:
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return fmt.Errorf("-jit_pid=%d: no such process (nothing at /proc/%d)", pid, pid)
		}
	}
	return nil
}

// dirs returns the -jit_dir directories, in order.
func (f jitFlags) dirs() []string {
	var dirs []string
	for _, v := range *f.dir {
		dirs = append(dirs, splitDirs(*v)...)
	}
	return dirs
}

// splitDirs splits a list of directories separated by commas or by the
// path list separator, dropping empty elements and duplicates.
func splitDirs(s string) []string {
	var out []string
	for _, d := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == filepath.ListSeparator }) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}
