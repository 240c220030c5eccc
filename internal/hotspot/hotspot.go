package hotspot

import "time"

// Options tune an attach. The zero value is jcmd's behaviour.
type Options struct {
	// AttachTimeout bounds the wait for the JVM to open its attach
	// socket after SIGQUIT; 0 means 10 s, jcmd's default
	// (sun.tools.attach.attachTimeout).
	AttachTimeout time.Duration
	// CommandTimeout bounds the command, from the connection to the end
	// of the reply; 0 means 2 minutes.
	CommandTimeout time.Duration
}

// maxReply bounds a reply read into memory.
const maxReply = 64 << 20

func (o Options) attachTimeout() time.Duration {
	if o.AttachTimeout > 0 {
		return o.AttachTimeout
	}
	return 10 * time.Second
}

func (o Options) commandTimeout() time.Duration {
	if o.CommandTimeout > 0 {
		return o.CommandTimeout
	}
	return 2 * time.Minute
}

// Jcmd runs the diagnostic command line cmd ("Compiler.perfmap",
// "VM.version", "help") in the JVM of process pid, as `jcmd PID cmd`
// does, with the default Options, and returns its output. See
// Options.Jcmd.
func Jcmd(pid int, cmd string) (string, error) { return Options{}.Jcmd(pid, cmd) }

// PerfMap has the JVM of process pid write its perf map (the diagnostic
// command Compiler.perfmap, JDK 17 and later) and returns the path where
// this process can read it: the JVM's /tmp/perf-NSPID.map, NSPID being
// the pid the JVM sees itself as, through /proc/PID/root.
func PerfMap(pid int) (string, error) { return Options{}.PerfMap(pid) }
