package jitsnap

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jitpprof/pprof/internal/procfs"
	"github.com/jitpprof/pprof/internal/regfile"
)

// CopyPerfFiles copies into dir the JIT file the runtime of the live
// process pid wrote for Linux perf, as the process sees its files (in a
// container too, named after its PID there): its jitdump, jit-PID.dump
// (V8 writes it in its current directory, LLVM's PerfJITEventListener
// under $JITDUMPDIR/.debug/jit/*/ or $HOME/.debug/jit/*/ of the
// process's own environment), else its perf map, /tmp/perf-PID.map. A
// jitdump names the same code as the perf map, with lines: with one, the
// perf map is not needed (and would only overlap it). The copy is
// called jit-PID.dump or perf-PID.map after pid. It returns the path it
// read, or "" and why neither could be copied.
func CopyPerfFiles(pid int, dir string) (from string, err error) {
	fs := procfs.New("/proc")
	nspid := fs.NSPID(uint32(pid))
	if src := copyJITDump(pid, nspid, dir); src != "" {
		return src, nil
	}
	src := fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, nspid)
	if err := copyRegular(src, filepath.Join(dir, fmt.Sprintf("perf-%d.map", pid))); err != nil {
		return "", fmt.Errorf("no jitdump, and no perf map: %w", err)
	}
	return src, nil
}

// copyJITDump copies the jitdump of process pid (nspid in its own PID
// namespace) into dir, if it wrote one where the runtimes do, and
// returns the path it read, or "".
func copyJITDump(pid int, nspid uint32, dir string) string {
	name := fmt.Sprintf("jit-%d.dump", nspid)
	root := fmt.Sprintf("/proc/%d/root", pid)
	candidates := []string{filepath.Join(fmt.Sprintf("/proc/%d/cwd", pid), name)}
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil {
		for _, kv := range strings.Split(string(env), "\x00") {
			for _, key := range []string{"JITDUMPDIR=", "HOME="} {
				if v, ok := strings.CutPrefix(kv, key); ok && filepath.IsAbs(v) {
					found, _ := filepath.Glob(filepath.Join(root, v, ".debug", "jit", "*", name))
					candidates = append(candidates, found...)
				}
			}
		}
	}
	for _, src := range candidates {
		if copyRegular(src, filepath.Join(dir, fmt.Sprintf("jit-%d.dump", pid))) == nil {
			return src
		}
	}
	return ""
}

// copyRegular copies the regular file src, as much as it holds when it is
// opened (a runtime may still be appending to it), to the new file dst.
func copyRegular(src, dst string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, st.Size()); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}
