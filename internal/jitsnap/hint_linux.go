//go:build linux

package jitsnap

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// capSysPtrace is CAP_SYS_PTRACE's bit in the capability sets.
const capSysPtrace = 19

// permissionHint explains why the kernel may refuse to let this process
// read process pid, from the system's settings and both processes'
// credentials, and what to do about it.
func permissionHint(pid int) string {
	var why []string
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		switch strings.TrimSpace(string(b)) {
		case "1":
			why = append(why, "Yama lets a process read only its descendants' memory "+
				"(/proc/sys/kernel/yama/ptrace_scope is 1): run jitsnap as root, give it CAP_SYS_PTRACE "+
				"(sudo setcap cap_sys_ptrace+ep jitsnap), or allow it with sudo sysctl kernel.yama.ptrace_scope=0")
		case "2":
			why = append(why, "Yama lets only CAP_SYS_PTRACE read other processes "+
				"(/proc/sys/kernel/yama/ptrace_scope is 2): run jitsnap as root or give it CAP_SYS_PTRACE")
		case "3":
			why = append(why, "Yama forbids reading other processes until reboot (/proc/sys/kernel/yama/ptrace_scope is 3)")
		}
	}
	self := readStatus("/proc/self/status")
	target := readStatus(fmt.Sprintf("/proc/%d/status", pid))
	myUID := uint64(os.Geteuid())
	switch uid, ok := target.uid(); {
	case ok && uid != myUID:
		why = append(why, fmt.Sprintf("the process belongs to uid %d and you are uid %d: run jitsnap as that user or as root (or with CAP_SYS_PTRACE)", uid, myUID))
	case ok && myUID != 0:
		// The files in /proc/PID of a process that is not dumpable (a
		// setuid or setcap program, or prctl(PR_SET_DUMPABLE, 0)) belong
		// to root, whoever runs it.
		if fi, err := os.Stat(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			if owner, ok := fileOwner(fi); ok && uint64(owner) != uid {
				why = append(why, "the process is not dumpable (a setuid or setcap program, or it called prctl(PR_SET_DUMPABLE, 0)): only CAP_SYS_PTRACE can read it")
			}
		}
	}
	mine, ok1 := self.caps("CapEff")
	theirs, ok2 := target.caps("CapPrm")
	if ok1 && ok2 && theirs&^mine != 0 {
		why = append(why, fmt.Sprintf("the process has capabilities jitsnap lacks (its CapPrm %x, jitsnap's CapEff %x): run jitsnap with at least those, or with CAP_SYS_PTRACE", theirs, mine))
	}
	if ok1 && mine&(1<<capSysPtrace) == 0 {
		why = append(why, "jitsnap has no CAP_SYS_PTRACE (in a container, add it: docker run --cap-add=SYS_PTRACE)")
	}
	if len(why) == 0 {
		why = append(why, "reading a process's memory needs the rights to attach a debugger to it: the same user, or CAP_SYS_PTRACE")
	}
	return strings.Join(why, "; ")
}

// procStatus is the "Key:\tvalue" lines of /proc/PID/status.
type procStatus map[string]string

func readStatus(path string) procStatus {
	st := procStatus{}
	b, err := os.ReadFile(path)
	if err != nil {
		return st
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			st[k] = strings.TrimSpace(v)
		}
	}
	return st
}

// uid returns the effective user id.
func (st procStatus) uid() (uint64, bool) {
	f := strings.Fields(st["Uid"])
	if len(f) < 2 {
		return 0, false
	}
	uid, err := strconv.ParseUint(f[1], 10, 32)
	return uid, err == nil
}

// caps returns a capability set (CapEff, CapPrm, ...).
func (st procStatus) caps(key string) (uint64, bool) {
	v, err := strconv.ParseUint(st[key], 16, 64)
	return v, err == nil && st[key] != ""
}
