//go:build linux

package hotspot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jitpprof/pprof/internal/testenv"
)

// helperEnv makes the test binary a helper: it runs Jcmd on the pid the
// variable gives and prints the error (for a test that needs another
// user's credentials).
const helperEnv = "HOTSPOT_TEST_JCMD_PID"

func TestMain(m *testing.M) {
	if s := os.Getenv(helperEnv); s != "" {
		pid, _ := strconv.Atoi(s)
		_, err := Jcmd(pid, "VM.version")
		fmt.Println(err)
		os.Exit(0)
	}
	code := m.Run()
	if built.classes != "" {
		os.RemoveAll(built.classes)
	}
	os.Exit(code)
}

// spin is a Java program that gets hot() compiled, prints "ready PID",
// and keeps calling hot() until its standard input ends.
const spin = `public class Spin {
    static int hot(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) s += (a[i] * 31) ^ (s >>> 3);
        return s;
    }
    public static void main(String[] args) throws Exception {
        int[] a = new int[10000];
        for (int i = 0; i < a.length; i++) a[i] = i;
        long x = 0;
        for (int i = 0; i < 5000; i++) x += hot(a);
        Thread t = new Thread(() -> {
            long y = 0;
            while (true) { y += hot(a); if (y == 42) System.out.println(); }
        });
        t.setDaemon(true);
        t.start();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) { }
    }
}
`

// javaEnv is what the tests need to run Java programs.
type javaEnv struct {
	java, jcmd string
	classes    string // a directory holding Spin.class, readable by all
}

var (
	buildOnce sync.Once
	built     javaEnv
	buildErr  error
)

// setup compiles Spin once per test binary, into a directory others may
// read (for the JVM run as nobody).
func setup(t *testing.T) javaEnv {
	t.Helper()
	if testing.Short() && !testenv.InCI() {
		t.Skip("runs OpenJDK; skipped in -short mode")
	}
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	javac := testenv.Tool(t, "javac", "openjdk-17-jdk-headless")
	jcmd := testenv.Tool(t, "jcmd", "openjdk-17-jdk-headless")
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hotspot-test-")
		if err != nil {
			buildErr = err
			return
		}
		os.Chmod(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "Spin.java"), []byte(spin), 0o644); err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command(javac, "Spin.java")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("javac: %v\n%s", err, out)
			return
		}
		built = javaEnv{java: java, jcmd: jcmd, classes: dir}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// jvm is a running Spin.
type jvm struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	mu     sync.Mutex
	stdout bytes.Buffer // after "ready"
}

// output returns what the JVM printed after "ready".
func (j *jvm) output() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stdout.String()
}

// alive reports whether the JVM still runs (is not a zombie).
func (j *jvm) alive() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", j.pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// startJVM runs Spin with the JVM options opts, in dir, until the test
// ends, and returns once it is ready. With cred, as that user.
func startJVM(t *testing.T, env javaEnv, cred *syscall.Credential, extraEnv []string, opts ...string) *jvm {
	t.Helper()
	args := append(append([]string{env.java, "-XX:-UsePerfData"}, opts...), "-cp", env.classes, "Spin")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = env.classes // where the trigger file goes
	return startJVMCommand(t, cmd, cred, extraEnv, "")
}

// startJVMCommand starts cmd, which runs Spin, and returns once Spin
// printed "ready"; the JVM is the process whose pid Spin printed, or
// cmd's if wantPid is "".
func startJVMCommand(t *testing.T, cmd *exec.Cmd, cred *syscall.Credential, extraEnv []string, wantPid string) *jvm {
	t.Helper()
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	j := &jvm{cmd: cmd}
	var err error
	if j.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		j.stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	ready := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		ready <- line
		for {
			b := make([]byte, 4096)
			n, err := r.Read(b)
			j.mu.Lock()
			j.stdout.Write(b[:n])
			j.mu.Unlock()
			if err != nil {
				break
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case line := <-ready:
		pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
		if err != nil {
			t.Fatalf("the JVM printed %q, want ready PID; stderr:\n%s", line, stderr.String())
		}
		j.pid = cmd.Process.Pid
		if wantPid != "" {
			j.pid = pid
		} else if pid != j.pid {
			t.Fatalf("the JVM says it is %d, but it was started as %d", pid, j.pid)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the JVM is not ready after a minute; stderr:\n%s", stderr.String())
	}
	return j
}

// removePerfMap removes, when t ends, the perf map a JVM wrote.
func removePerfMap(t *testing.T, path string) {
	t.Cleanup(func() { os.Remove(path) })
}

// TestJcmd attaches to a JVM that has no attach listener yet (so that
// Jcmd must start it by SIGQUIT) and compares the output of commands
// with jcmd's, then has it write its perf map, which must name Spin.hot.
// The JVM must not have printed a thread dump (the SIGQUIT found the
// trigger file).
func TestJcmd(t *testing.T) {
	env := setup(t)
	j := startJVM(t, env, nil, nil)
	if _, err := os.Stat(fmt.Sprintf("/tmp/.java_pid%d", j.pid)); err == nil {
		t.Fatal("the JVM has an attach socket before anything attached")
	}
	for _, cmd := range []string{"VM.version", "VM.command_line", "help Compiler.perfmap"} {
		got, err := Jcmd(j.pid, cmd)
		if err != nil {
			t.Fatalf("Jcmd %s: %v", cmd, err)
		}
		out, err := exec.Command(env.jcmd, strconv.Itoa(j.pid), cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("jcmd %s: %v\n%s", cmd, err, out)
		}
		// jcmd prints "PID:" before the JVM's reply.
		want := strings.TrimPrefix(string(out), fmt.Sprintf("%d:\n", j.pid))
		if got != want {
			t.Errorf("%s: got\n%s\njcmd printed\n%s", cmd, got, want)
		}
	}
	if _, err := Jcmd(j.pid, "No.such_command"); !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "Unknown diagnostic command") {
		t.Errorf("an unknown command: got %v, want ErrCommand with the JVM's message", err)
	}

	path, err := PerfMap(j.pid)
	if err != nil {
		t.Fatal(err)
	}
	removePerfMap(t, path)
	if want := fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", j.pid, j.pid); path != want {
		t.Errorf("got path %s, want %s", path, want)
	}
	checkPerfMap(t, path)
	if out := j.output(); strings.Contains(out, "Full thread dump") {
		t.Errorf("the JVM printed a thread dump:\n%.500s", out)
	}
}

// checkPerfMap checks that the perf map at path names Spin.hot, as the
// JVM names compiled methods (a line per piece of code).
func checkPerfMap(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no perf map: %v", err)
	}
	if !strings.Contains(string(b), " int Spin.hot(int[])\n") {
		t.Errorf("%s does not name Spin.hot (%d lines):\n%.1000s", path, bytes.Count(b, []byte("\n")), b)
	}
}

// TestNotJVM: a process that does not map libjvm.so is refused without
// a signal: sleep, whose SIGQUIT would end it, still runs. So is no
// process at all.
func TestNotJVM(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		testenv.Missing(t, "sleep", err.Error())
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(50 * time.Millisecond) // past exec
	_, err := Jcmd(cmd.Process.Pid, "VM.version")
	if !errors.Is(err, ErrNotJVM) || !strings.Contains(err.Error(), "sleep does not map libjvm.so") {
		t.Errorf("got %v, want ErrNotJVM naming sleep", err)
	}
	t.Log(err)
	time.Sleep(100 * time.Millisecond)
	j := &jvm{pid: cmd.Process.Pid}
	if !j.alive() {
		t.Error("sleep ended: it was signalled")
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := Jcmd(pid, "VM.version"); !errors.Is(err, ErrNoProcess) {
			t.Errorf("pid %d: got %v, want ErrNoProcess", pid, err)
		}
	}
}

// TestAttachDisabled: a JVM started with -XX:+DisableAttachMechanism, on
// its command line or in JAVA_TOOL_OPTIONS, is refused without a signal,
// which would have had it print a thread dump; with a later
// -XX:-DisableAttachMechanism it is attached to.
func TestAttachDisabled(t *testing.T) {
	env := setup(t)
	for _, tc := range []struct {
		name string
		env  []string
		opts []string
		want error
	}{
		{name: "command line", opts: []string{"-XX:+DisableAttachMechanism"}, want: ErrAttachDisabled},
		{name: "JAVA_TOOL_OPTIONS", env: []string{"JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism"}, want: ErrAttachDisabled},
		{name: "enabled again", env: []string{"JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism"}, opts: []string{"-XX:-DisableAttachMechanism"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := startJVM(t, env, nil, tc.env, tc.opts...)
			_, err := Jcmd(j.pid, "VM.version")
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			t.Log(err)
			time.Sleep(300 * time.Millisecond)
			if out := j.output(); strings.Contains(out, "Full thread dump") {
				t.Errorf("the JVM printed a thread dump:\n%.500s", out)
			}
			if !j.alive() {
				t.Error("the JVM ended")
			}
		})
	}
}

// TestReduceSignalUsage: a JVM run with -Xrs does not catch SIGQUIT,
// which would end it; it opens its attach socket at startup instead.
// Jcmd uses that socket, and once the socket is gone, refuses without a
// signal.
func TestReduceSignalUsage(t *testing.T) {
	env := setup(t)
	j := startJVM(t, env, nil, nil, "-Xrs")
	if _, err := Jcmd(j.pid, "VM.version"); err != nil {
		t.Fatalf("Jcmd with the socket the JVM opened at startup: %v", err)
	}
	if err := os.Remove(fmt.Sprintf("/proc/%d/root/tmp/.java_pid%d", j.pid, j.pid)); err != nil {
		t.Fatal(err)
	}
	_, err := Jcmd(j.pid, "VM.version")
	if !errors.Is(err, ErrNoSignalHandler) {
		t.Errorf("got %v, want ErrNoSignalHandler", err)
	}
	t.Log(err)
	time.Sleep(200 * time.Millisecond)
	if !j.alive() {
		t.Error("the JVM ended: it was signalled")
	}
}

// TestAttachTimeout: a stopped JVM does not open its socket; Jcmd gives
// up after AttachTimeout.
func TestAttachTimeout(t *testing.T) {
	env := setup(t)
	j := startJVM(t, env, nil, nil)
	if err := syscall.Kill(j.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The JVM would print a thread dump once continued: it is killed.
	t.Cleanup(func() { syscall.Kill(j.pid, syscall.SIGKILL) })
	start := time.Now()
	_, err := Options{AttachTimeout: 400 * time.Millisecond}.Jcmd(j.pid, "VM.version")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	t.Log(err)
	if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %v, want about 400ms", d)
	}
	for _, f := range []string{"/proc/%d/cwd/.attach_pid%d", "/proc/%d/root/tmp/.attach_pid%d"} {
		if _, err := os.Stat(fmt.Sprintf(f, j.pid, j.pid)); err == nil {
			t.Errorf("the trigger file %s is left behind", fmt.Sprintf(f, j.pid, j.pid))
		}
	}
}

// TestOtherUser: as root, attaching to a JVM that runs as nobody works
// (the connection is made with the JVM's uid and gid, and the trigger
// file is the JVM's user's); as nobody, attaching to root's JVM is
// refused with a permission error. As another user, only the second is
// tested, against a JVM of this user... which nobody may not attach to
// either: both need root.
func TestOtherUser(t *testing.T) {
	env := setup(t)
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root", "run the tests as root (./test.sh under CI does) to attach across users")
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}

	t.Run("root to nobody's JVM", func(t *testing.T) {
		j := startJVM(t, env, nobody, nil)
		got, err := Jcmd(j.pid, "VM.version")
		if err != nil || !strings.Contains(got, "OpenJDK") {
			t.Fatalf("got %q, %v", got, err)
		}
		path, err := PerfMap(j.pid)
		if err != nil {
			t.Fatal(err)
		}
		removePerfMap(t, path)
		checkPerfMap(t, path)
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil || st.Uid != nobody.Uid {
			t.Errorf("the perf map is owned by uid %d (%v), want nobody's: the JVM wrote it", st.Uid, err)
		}
	})

	t.Run("nobody to root's JVM", func(t *testing.T) {
		j := startJVM(t, env, nil, nil)
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(env.classes, "hotspot.test")
		data, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", helperEnv, j.pid))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("running the test binary as nobody: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "permission denied") || !strings.Contains(string(out), "runs as uid 0 and you are uid 65534") {
			t.Errorf("got %s, want a permission error naming the users", out)
		}
		t.Logf("%s", out)
		if !j.alive() {
			t.Error("the JVM ended")
		}
	})
}

// TestContainer attaches to a JVM in its own PID and mount namespaces,
// with its own /tmp (as in a container): PID 1 there, its socket and
// perf map under /proc/PID/root/tmp, named after PID 1.
func TestContainer(t *testing.T) {
	env := setup(t)
	unshare := testenv.Tool(t, "unshare", "util-linux")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (unshare makes namespaces)", "run the tests as root, as ./test.sh under CI does")
	}
	// The classes are under the host's /tmp, which the container's
	// hides: the JVM runs in that directory, entered before the mount,
	// and reads it as /proc/self/cwd.
	script := fmt.Sprintf("cd %s && mount -t tmpfs tmpfs /tmp && exec %s -XX:-UsePerfData -cp /proc/self/cwd Spin", env.classes, env.java)
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount", "--mount-proc", "--", "sh", "-c", script)
	j := startJVMCommand(t, cmd, nil, nil, "in the container")
	// Spin printed its pid in the container; find it outside.
	if j.pid != 1 {
		t.Fatalf("the JVM is pid %d in its namespace, want 1", j.pid)
	}
	host := childJava(t, cmd.Process.Pid)
	j.pid = host
	path, err := PerfMap(host)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("/proc/%d/root/tmp/perf-1.map", host); path != want {
		t.Errorf("got %s, want %s", path, want)
	}
	checkPerfMap(t, path)
	if _, err := os.Stat("/tmp/perf-1.map"); err == nil {
		t.Log("/tmp/perf-1.map exists on the host too (another test's?)")
	}
}

// childJava returns the pid of the java process unshare (pid) started.
func childJava(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		child, _ := strconv.Atoi(f)
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child)); strings.TrimSpace(string(comm)) == "java" {
			return child
		}
	}
	t.Fatalf("no java among the children %q of unshare", b)
	return 0
}

// TestConnectAsPeerCred: a connection made by connectAs with switched
// credentials reaches the listener with those credentials (what a JVM
// reads with SO_PEERCRED), and the process's own are unchanged after.
func TestConnectAsPeerCred(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root", "run the tests as root (./test.sh under CI does) to switch credentials")
	}
	dir, err := os.MkdirTemp("", "hotspot-cred-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Chmod(sock, 0o600)
	os.Chown(sock, 65534, 65533)
	for _, tc := range []struct {
		name     string
		switchTo bool
		uid, gid uint32
	}{
		{name: "as nobody", switchTo: true, uid: 65534, gid: 65533},
		{name: "as root", uid: 0, gid: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accepted := make(chan *unix.Ucred, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					accepted <- nil
					return
				}
				defer c.Close()
				raw, _ := c.(*net.UnixConn).SyscallConn()
				var cred *unix.Ucred
				raw.Control(func(fd uintptr) { cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
				accepted <- cred
			}()
			tg := &target{pid: os.Getpid(), uid: tc.uid, gid: tc.gid}
			conn, err := tg.dial(sock, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			cred := <-accepted
			if cred == nil || cred.Uid != tc.uid || cred.Gid != tc.gid {
				t.Errorf("the listener saw %+v, want uid %d gid %d", cred, tc.uid, tc.gid)
			}
			if os.Geteuid() != 0 || os.Getegid() != 0 {
				t.Errorf("after the connection, this thread is uid %d gid %d", os.Geteuid(), os.Getegid())
			}
		})
	}
	// Every thread of the process is still root.
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		status, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		var tg target
		if err := parseStatus(status, &tg); err != nil || tg.uid != 0 || tg.gid != 0 {
			t.Errorf("thread %s: uid %d gid %d (%v)", task.Name(), tg.uid, tg.gid, err)
		}
	}
}
