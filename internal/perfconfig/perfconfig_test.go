package perfconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// parseTests are configuration files with the buildid.dir perf reads
// from them ("" and ok false: none) and the line of the error it reports
// (0: none); TestParseAsPerf checks both against perf itself.
var parseTests = []struct {
	name    string
	file    string
	want    string
	ok      bool
	errLine int
}{
	{"build-ID cache", "[buildid]\n\tdir = /srv/perf-cache\n", "/srv/perf-cache", true, 0},
	{"no newline at the end", "[buildid]\ndir=/x", "/x", true, 0},
	{"quoted, comment after", "[buildid]\ndir = \"/tmp/a b\" ; the cache\n", "/tmp/a b", true, 0},
	{"white space runs", "[buildid]\ndir =   /a \t  b  \n", "/a b", true, 0},
	{"quoted white space kept", "[buildid]\ndir = \" /a  b \"\n", " /a  b ", true, 0},
	{"escapes", "[buildid]\ndir = \"x\\ty\\\\z\\\"w\"\n", "x\ty\\z\"w", true, 0},
	// Two spaces: the one before the backslash, and the indentation.
	{"continued", "[buildid]\ndir = /one \\\n  two\nx = 3\n", "/one  two", true, 0},
	{"continued in quotes", "[buildid]\ndir = \"/one\\\ntwo\"\n", "/onetwo", true, 0},
	{"continued at the end", "[buildid]\ndir = /x\\", "/x", true, 0},
	{"backslash in a comment", "[buildid]\ndir = /x # \\\n[a]\nb = 1\n", "/x", true, 0},
	{"CRLF", "[buildid]\r\ndir = /x\r\n[a]\r\nb = 1\r\n", "/x", true, 0},
	{"section's case", "[BuildID]\ndir = /x\n", "/x", true, 0},
	{"name's first letter", "[buildid]\nDir = /x\n", "/x", true, 0},
	{"name's other letters", "[buildid]\ndir = /x\ndIR = /y\n", "/x", true, 0},
	{"last value wins", "[buildid]\ndir = /x\n[buildid]\ndir = /y\n", "/y", true, 0},
	{"other sections", "[report]\ndir = /x\n[buildid \"a\"]\ndir = /y\n[buildid.b]\ndir = /z\n", "", false, 0},
	{"other variables", "[buildid]\ndirectory = /x\ndir-x = /y\n", "", false, 0},
	{"comments and blank lines", "# perf\n\n; more\n[buildid] # here\n  dir = /x # and here\n", "/x", true, 0},
	{"empty value", "[buildid]\ndir =\n", "", true, 0},
	{"empty quoted value", "[buildid]\ndir = /x\ndir = \"\"\n", "", true, 0},
	{"byte order mark", "\xef\xbb\xbf[buildid]\ndir = /x\n", "/x", true, 0},
	{"no value", "[buildid]\ndir = /x\ndir\n", "/x", true, 3},
	{"unterminated quote", "[buildid]\ndir = /x\ndir = \"/open\n", "/x", true, 3},
	{"unknown escape", "[buildid]\ndir = /x\ndir = /x\\qy\ndir = /z\n", "/x", true, 3},
	{"value too long", "[buildid]\ndir = /x\ndir = /" + strings.Repeat("v", 1100) + "\n", "/x", true, 3},
	{"longest value", "[buildid]\ndir = /" + strings.Repeat("v", 1021) + "\n", "/" + strings.Repeat("v", 1021), true, 0},
}

func TestParse(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := parse("perfconfig", strings.NewReader(tc.file))
			if got != tc.want || ok != tc.ok {
				t.Errorf("buildid.dir %q (set: %v), want %q (%v)", got, ok, tc.want, tc.ok)
			}
			checkErrLine(t, err, tc.errLine)
		})
	}
}

// checkErrLine checks that err is a *SyntaxError at line, or nil if
// line is 0.
func checkErrLine(t *testing.T, err error, line int) {
	t.Helper()
	var se *SyntaxError
	switch {
	case line == 0 && err != nil:
		t.Errorf("error %v, want none", err)
	case line != 0 && !errors.As(err, &se):
		t.Errorf("error %v, want a syntax error at line %d", err, line)
	case line != 0 && se.Line != line:
		t.Errorf("error at line %d, want %d (%v)", se.Line, line, err)
	}
}

// TestParseAsPerf has perf read each file of parseTests ($PERF_CONFIG,
// perf config -l): its buildid.dir and the line of its error must be
// those parse finds.
func TestParseAsPerf(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	dir := t.TempDir()
	for i, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strconv.Itoa(i))
			if err := os.WriteFile(file, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(perf, "config", "-l")
			cmd.Env = append(os.Environ(), "PERF_CONFIG="+file)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("perf config -l: %v\n%s", err, stderr.String())
			}
			perfDir, perfOK := "", false
			for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if v, ok := strings.CutPrefix(l, "buildid.dir="); ok {
					perfDir, perfOK = v, true
				}
			}
			ours, ok, ourErr := parse(file, strings.NewReader(tc.file))
			if ours != perfDir || ok != perfOK {
				t.Errorf("ours %q (set: %v), perf's %q (%v)", ours, ok, perfDir, perfOK)
			}
			perfLine := 0
			if m := regexp.MustCompile(`bad config file line (\d+) in`).FindStringSubmatch(stderr.String()); m != nil {
				perfLine, _ = strconv.Atoi(m[1])
			}
			checkErrLine(t, ourErr, perfLine)
		})
	}
}

// TestBuildIDDir checks which files BuildIDDir reads, and in what
// order, for each environment perf distinguishes.
func TestBuildIDDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		testenv.WriteFile(t, path, []byte(content))
		return path
	}
	system := write("etc/perfconfig", "[buildid]\ndir = /system\n")
	badSystem := write("etc/bad", "[buildid]\ndir = /system\ndir\n")
	write("home/.perfconfig", "[buildid]\ndir = /user\n")
	write("empty/.perfconfig", "")
	write("other/.perfconfig", "[report]\nsort-order = dso\n")
	exclusive := write("exclusive", "[buildid]\ndir = /exclusive\n")
	huge := write("huge", "[buildid]\ndir = /huge\n"+strings.Repeat("# comment\n", 200000))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		system  string
		want    string
		wantErr string
	}{
		{"user over system", map[string]string{"HOME": home}, system, "/user", ""},
		{"PERF_CONFIG only", map[string]string{"HOME": home, "PERF_CONFIG": exclusive}, system, "/exclusive", ""},
		{"PERF_CONFIG without it", map[string]string{"HOME": home, "PERF_CONFIG": filepath.Join(dir, "other/.perfconfig")}, system,
			filepath.Join(home, ".debug"), ""},
		{"no system file", map[string]string{"HOME": home}, filepath.Join(dir, "none"), "/user", ""},
		{"PERF_CONFIG_NOSYSTEM", map[string]string{"HOME": home, "PERF_CONFIG_NOSYSTEM": "1"}, system, "/user", ""},
		{"PERF_CONFIG_NOSYSTEM, no user's", map[string]string{"HOME": filepath.Join(dir, "other"), "PERF_CONFIG_NOSYSTEM": "1"}, system,
			filepath.Join(dir, "other/.debug"), ""},
		{"PERF_CONFIG_NOGLOBAL", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "yes"}, system, "/system", ""},
		{"PERF_CONFIG_NOGLOBAL false", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "off"}, system, "/user", ""},
		{"not a boolean", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "maybe"}, system,
			"/user", `PERF_CONFIG_NOGLOBAL="maybe": not a boolean`},
		{"bad system file: user's not read", map[string]string{"HOME": home}, badSystem, "/system", "bad: bad config file line 3"},
		{"empty user file", map[string]string{"HOME": filepath.Join(dir, "empty")}, system, "/system", ""},
		{"user's without it", map[string]string{"HOME": filepath.Join(dir, "other")}, system, "/system", ""},
		{"no HOME", map[string]string{}, filepath.Join(dir, "none"), "", ""},
		{"PERF_CONFIG missing", map[string]string{"HOME": home, "PERF_CONFIG": filepath.Join(dir, "none")}, system,
			filepath.Join(home, ".debug"), "no such file"},
		// Only regular files are read: a FIFO would block the open, a
		// device such as /dev/urandom read without end.
		{"PERF_CONFIG a directory", map[string]string{"PERF_CONFIG": dir}, system,
			"", "open " + dir + ": not a regular file (d---------)"},
		{"PERF_CONFIG a FIFO", map[string]string{"PERF_CONFIG": fifo}, system,
			"", "open " + fifo + ": not a regular file (p---------)"},
		{"PERF_CONFIG a device", map[string]string{"PERF_CONFIG": "/dev/urandom"}, system,
			"", "open /dev/urandom: not a regular file (Dc---------)"},
		// Read up to 1 MiB: the values before are kept.
		{"PERF_CONFIG huge", map[string]string{"PERF_CONFIG": huge}, system,
			"/huge", huge + ": read " + huge + ": more than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BuildIDDir(func(k string) string { return tc.env[k] }, tc.system)
			if got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestOthersUserFile: a ~/.perfconfig of another user is ignored with
// an error saying so, as perf ignores it with a warning.
func TestOthersUserFile(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root", "giving a file to another user needs root (./test.sh runs as root to install packages)")
	}
	home := t.TempDir()
	file := filepath.Join(home, ".perfconfig")
	if err := os.WriteFile(file, []byte("[buildid]\ndir = /other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	got, err := BuildIDDir(func(k string) string { return map[string]string{"HOME": home}[k] }, filepath.Join(home, "none"))
	if want := filepath.Join(home, ".debug"); got != want || err == nil || !strings.Contains(err.Error(), "not owned by the current user or root") {
		t.Errorf("got %q, %v; want %q, and an error saying why", got, err, want)
	}
}

// FuzzParse: any file parses without panicking, to a value within
// perf's length limit, and an error names a line of the file.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add([]byte(tc.file))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _, err := parse("f", bytes.NewReader(data))
		if len(v) >= maxValue {
			t.Errorf("value of %d bytes", len(v))
		}
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1 || se.Line > strings.Count(string(data), "\n")+1) {
			t.Errorf("error %v: want a syntax error at a line of the file", err)
		}
	})
}
