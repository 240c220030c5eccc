//go:build !linux

package hotspot

import "runtime"

// Jcmd runs a diagnostic command in a JVM. It needs Linux; elsewhere it
// returns an *Error of kind ErrUnsupported.
func (o Options) Jcmd(pid int, cmd string) (string, error) {
	return "", unsupported(pid)
}

// PerfMap has a JVM write its perf map. It needs Linux; elsewhere it
// returns an *Error of kind ErrUnsupported.
func (o Options) PerfMap(pid int) (string, error) {
	return "", unsupported(pid)
}

func unsupported(pid int) error {
	return &Error{PID: pid, Kind: ErrUnsupported, Msg: "attaching to a JVM is implemented only on Linux, not " + runtime.GOOS}
}
