package perfdata

import "testing"

// TestSpansOf: each address is in the mapping that starts highest below
// it and holds it (of equal starts the later), however many mappings lie
// between: perf inject --jit maps a file per V8 builtin into node's text
// (thousands), and node's text above them is still node's.
func TestSpansOf(t *testing.T) {
	node := &mmapping{start: 0x1000, limit: 0x100000, file: "node"}
	list := []*mmapping{node}
	for i := range uint64(3000) {
		list = append(list, &mmapping{start: 0x2000 + i*0x10, limit: 0x2000 + i*0x10 + 8, file: "jitted"})
	}
	inner := &mmapping{start: 0x80000, limit: 0x90000, file: "inner"}
	same := &mmapping{start: 0x80000, limit: 0x88000, file: "same start, later"}
	gap := &mmapping{start: 0x200000, limit: 0x201000, file: "after a gap"}
	list = append(list, inner, same, gap)
	rec := &Recording{procs: map[uint32][]*mmapping{1: list}}
	rec.index()
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{addr: 0xfff, want: ""},
		{addr: 0x1000, want: "node"},
		{addr: 0x2000, want: "jitted"},
		{addr: 0x2007, want: "jitted"},
		{addr: 0x2008, want: "node"},                 // between two jitted files
		{addr: 0x2000 + 2999*0x10 + 8, want: "node"}, // above the last
		{addr: 0x7ffff, want: "node"},
		{addr: 0x80000, want: "same start, later"},
		{addr: 0x87fff, want: "same start, later"},
		{addr: 0x88000, want: "inner"},
		{addr: 0x90000, want: "node"},
		{addr: 0xfffff, want: "node"},
		{addr: 0x100000, want: ""},
		{addr: 0x200000, want: "after a gap"},
		{addr: 0x201000, want: ""},
	} {
		got := ""
		if mm := rec.lookup(&ancestry{rec: rec}, 1, tc.addr); mm != nil {
			got = mm.file
		}
		if got != tc.want {
			t.Errorf("lookup(%#x) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if n := len(rec.spans[1]); n > 2*len(list) {
		t.Errorf("%d spans of %d mappings, want at most twice as many", n, len(list))
	}
}
