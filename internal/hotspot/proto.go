package hotspot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// target is what is known of a process before attaching to it.
type target struct {
	pid      int
	nspid    int    // the pid the process sees itself as
	uid, gid uint32 // its effective user and group
	catches  bool   // it has a handler for SIGQUIT
}

// socketPath returns where the JVM's attach socket is, seen from here.
func (t *target) socketPath() string {
	return fmt.Sprintf("/proc/%d/root/tmp/.java_pid%d", t.pid, t.nspid)
}

// sigQuit is SIGQUIT's number on Linux (bit sigQuit-1 of SigCgt).
const sigQuit = 3

// parseStatus reads NSpid, Uid, Gid and SigCgt of /proc/PID/status.
func parseStatus(status []byte, t *target) error {
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch key {
		case "NSpid": // absent before Linux 4.1: the pid then
			if len(f) > 0 {
				n, err := strconv.Atoi(f[len(f)-1])
				if err != nil || n <= 0 {
					return fmt.Errorf("bad NSpid %q", val)
				}
				t.nspid = n
			}
		case "Uid", "Gid":
			if len(f) < 2 {
				return fmt.Errorf("bad %s %q", key, val)
			}
			n, err := strconv.ParseUint(f[1], 10, 32) // the effective id
			if err != nil {
				return fmt.Errorf("bad %s %q", key, val)
			}
			if key == "Uid" {
				t.uid = uint32(n)
			} else {
				t.gid = uint32(n)
			}
			seen++
		case "SigCgt":
			if len(f) != 1 {
				return fmt.Errorf("bad SigCgt %q", val)
			}
			mask, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				return fmt.Errorf("bad SigCgt %q", val)
			}
			t.catches = mask&(1<<(sigQuit-1)) != 0
			seen++
		}
	}
	if seen != 3 {
		return errors.New("no Uid, Gid or SigCgt line")
	}
	return nil
}

// mapsLibJVM reports whether a /proc/PID/maps text maps libjvm.so.
func mapsLibJVM(maps []byte) bool {
	for len(maps) > 0 {
		line := maps
		if i := bytes.IndexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		if filepath.Base(mapsPath(string(line))) == "libjvm.so" {
			return true
		}
	}
	return false
}

// mapsPath returns the path of a line of /proc/PID/maps, which may
// hold spaces, without the " (deleted)" of a file removed since it was
// mapped (a JDK upgraded under a running JVM); "" for an anonymous
// mapping.
func mapsPath(line string) string {
	rest := line
	for range 5 { // address, perms, offset, dev, inode
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	return strings.TrimSuffix(strings.TrimLeft(rest, " "), " (deleted)")
}

// request returns a request of protocol version 1: the command and
// its three arguments, each ended by a NUL byte. jcmd sends its whole
// command line as the first argument.
func request(op string, args ...string) []byte {
	var b bytes.Buffer
	b.WriteString("1\x00")
	b.WriteString(op)
	b.WriteByte(0)
	for i := range 3 {
		if i < len(args) {
			b.WriteString(args[i])
		}
		b.WriteByte(0)
	}
	return b.Bytes()
}

// parseReply splits a reply into its status line and output.
func parseReply(pid int, reply []byte) (string, error) {
	if len(reply) == 0 {
		return "", &Error{PID: pid, Kind: ErrProtocol, Msg: "the JVM closed the connection without a reply",
			Hint: "it refuses a client whose effective uid and gid are not its own (or root's, from JDK 11 on), and one that sends a request it cannot read"}
	}
	line, out, ok := bytes.Cut(reply, []byte("\n"))
	status, err := strconv.Atoi(string(line))
	if !ok || err != nil {
		return "", &Error{PID: pid, Kind: ErrProtocol, Msg: fmt.Sprintf("the reply does not start with a status line: %q", truncate(reply, 80))}
	}
	switch status {
	case 0:
		return string(out), nil
	case 101: // ATTACH_ERROR_BADVERSION
		return "", &Error{PID: pid, Kind: ErrProtocol, Msg: "the JVM does not speak attach protocol version 1"}
	}
	msg := strings.TrimSpace(string(out))
	if msg == "" {
		msg = "no message"
	}
	return "", &Error{PID: pid, Kind: ErrCommand, Msg: fmt.Sprintf("the JVM answered status %d: %s", status, msg)}
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
