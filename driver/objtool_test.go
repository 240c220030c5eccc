package driver

import (
	"flag"
	"strings"
	"testing"
)

// TestObjtoolMode checks how a run chooses its object tool: -objtool
// on the command line (read before upstream parses it), else
// $PPROF_OBJTOOL, else the in-process tool; an unknown value is an error
// naming it.
func TestObjtoolMode(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     string
		want    string
		wantErr string
	}{
		{args: []string{"-top", "x.prof"}, want: objtoolInProcess},
		{args: []string{"-objtool=binutils", "-top", "x.prof"}, want: objtoolBinutils},
		{args: []string{"--objtool", "binutils", "x.prof"}, want: objtoolBinutils},
		{args: []string{"-top", "x.prof", "-objtool=binutils"}, want: objtoolInProcess}, // after the first non-flag: a source, as package flag reads it
		{args: []string{"-objtool=binutils", "-objtool=inprocess", "x.prof"}, want: objtoolInProcess},
		{args: []string{"x.prof"}, env: "binutils", want: objtoolBinutils},
		{args: []string{"-objtool=inprocess", "x.prof"}, env: "binutils", want: objtoolInProcess},
		{args: []string{"-objtool=objdump", "x.prof"}, wantErr: `-objtool="objdump": unknown value`},
		{args: []string{"x.prof"}, env: "llvm", wantErr: `-objtool="llvm": unknown value`},
	} {
		fs := NewFlagSet("pprof", tc.args, flag.ContinueOnError)
		got, err := objtoolMode(fs, func(k string) string {
			if k == "PPROF_OBJTOOL" {
				return tc.env
			}
			return ""
		})
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q, env %q: error %v, want %q", tc.args, tc.env, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("%q, env %q: %q, %v; want %q", tc.args, tc.env, got, err, tc.want)
		}
	}
}
