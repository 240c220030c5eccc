package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
)

// A Frame is one frame llvm-symbolizer reports for an address.
type Frame struct {
	Func      string
	File      string
	Line      int
	Column    int
	StartLine int
}

// LLVMSymbolize runs one llvm-symbolizer-14 process over all addrs of
// the object file obj, with inline frames and without demangling (the
// ground truth jitpprof's symbolization is checked against), and returns
// the frames of each address, leaf first; an address llvm-symbolizer
// knows nothing about gets no frames.
func LLVMSymbolize(t testing.TB, obj string, addrs []uint64) [][]Frame {
	t.Helper()
	return LLVMSymbolizeWith(t, 14, obj, addrs)
}

// LLVMSymbolizeWith is LLVMSymbolize with llvm-symbolizer of the given
// LLVM major version.
func LLVMSymbolizeWith(t testing.TB, version int, obj string, addrs []uint64) [][]Frame {
	t.Helper()
	return LLVMSymbolizeArgs(t, version, obj, addrs)
}

// LLVMSymbolizeArgs is LLVMSymbolizeWith with more arguments for
// llvm-symbolizer (--debug-file-directory=DIR, say).
func LLVMSymbolizeArgs(t testing.TB, version int, obj string, addrs []uint64, args ...string) [][]Frame {
	t.Helper()
	tool := Tool(t, fmt.Sprintf("llvm-symbolizer-%d", version), fmt.Sprintf("llvm-%d", version))
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool, append([]string{"--inlining", "--no-demangle", "--output-style=JSON", "--obj=" + obj}, args...)...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, stderr.Bytes())
	}
	var res [][]Frame
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Symbol []struct {
				FunctionName string
				FileName     string
				Line         int
				Column       int
				StartLine    int
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s output %q: %v", tool, sc.Bytes(), err)
		}
		var frames []Frame
		for _, s := range r.Symbol {
			frames = append(frames, Frame{Func: s.FunctionName, File: s.FileName, Line: s.Line, Column: s.Column, StartLine: s.StartLine})
		}
		if len(frames) == 1 && frames[0] == (Frame{}) {
			frames = nil
		}
		res = append(res, frames)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(addrs) {
		t.Fatalf("%s answered %d addresses, want %d", tool, len(res), len(addrs))
	}
	return res
}
