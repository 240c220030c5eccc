package perfconfig

import (
	"bytes"
	"errors"
	"maps"
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

// parseTests are configuration files with the variables perf reads from
// them and the line of the error it reports (0: none); TestParseAsPerf
// checks both against perf itself.
var parseTests = []struct {
	name    string
	file    string
	want    Config
	errLine int
}{
	{"build-ID cache", "[buildid]\n\tdir = /srv/perf-cache\n", Config{"buildid.dir": "/srv/perf-cache"}, 0},
	{"no newline at the end", "[buildid]\ndir=/x", Config{"buildid.dir": "/x"}, 0},
	{"quoted, comment after", "[buildid]\ndir = \"/tmp/a b\" ; the cache\n", Config{"buildid.dir": "/tmp/a b"}, 0},
	{"white space runs", "[report]\nsort-order =   a \t  b  \n", Config{"report.sort-order": "a b"}, 0},
	{"escapes", "[a]\nb = \"x\\ty\\\\z\\\"w\"\n", Config{"a.b": "x\ty\\z\"w"}, 0},
	// Two spaces: the one before the backslash, and the indentation.
	{"continued", "[a]\nb = one \\\n  two\nc = 3\n", Config{"a.b": "one  two", "a.c": "3"}, 0},
	{"CRLF", "[buildid]\r\ndir = /x\r\n[a]\r\nb = 1\r\n", Config{"buildid.dir": "/x", "a.b": "1"}, 0},
	{"names' case", "[BuildID]\nDir = /x\ndIR = /y\n", Config{"buildid.dir": "/x", "buildid.dIR": "/y"}, 0},
	{"last value wins", "[buildid]\ndir = /x\n[buildid]\ndir = /y\n", Config{"buildid.dir": "/y"}, 0},
	{"comments and blank lines", "# perf\n\n; more\n[a] # here\n  b = 1 # and here\n", Config{"a.b": "1"}, 0},
	{"empty value", "[a]\nb =\nc = \"\"\n", Config{"a.b": "", "a.c": ""}, 0},
	{"byte order mark", "\xef\xbb\xbf[a]\nb = 1\n", Config{"a.b": "1"}, 0},
	{"dots, dashes, digits", "[call-graph.x]\nrecord-mode2 = dwarf\n", Config{"call-graph.x.record-mode2": "dwarf"}, 0},
	{"name without value", "[a]\nb = 1\n[c]\nflag\nd = 2\n", Config{"a.b": "1"}, 4},
	{"unterminated quote", "[buildid]\ndir = /x\n[a]\nb = \"open\n", Config{"buildid.dir": "/x"}, 4},
	{"unknown escape", "[a]\nb = 1\nc = x\\qy\n", Config{"a.b": "1"}, 3},
	{"variable before any section", "b = 1\n", Config{}, 1},
	{"line starting with a digit", "[a]\n1b = 2\n", Config{}, 2},
	{"subsection without quotes", "[a]\nb = 1\n[c d]\ne = 2\n", Config{"a.b": "1"}, 3},
	{"header not closed", "[a]\nb = 1\n[c\ne = 2\n", Config{"a.b": "1"}, 4},
	{"empty header", "[]\nb = 1\n", Config{}, 1},
	{"no '=' after the name", "[a]\nb : 1\n", Config{}, 2},
	{"value too long", "[a]\nb = 1\nc = " + strings.Repeat("v", 1100) + "\n", Config{"a.b": "1"}, 3},
	{"partial byte order mark", "\xef\xbb[a]\n", Config{}, 1},
}

func TestParse(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			got := Config{}
			err := got.Parse("perfconfig", strings.NewReader(tc.file))
			if !maps.Equal(got, tc.want) {
				t.Errorf("values %q, want %q", got, tc.want)
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
// perf config -l): its variables and the line of its error must be
// those of Parse.
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
			perfVars := Config{}
			for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					perfVars[k] = v
				}
			}
			ours := Config{}
			ourErr := ours.Parse(file, strings.NewReader(tc.file))
			if !maps.Equal(ours, perfVars) {
				t.Errorf("ours %q, perf's %q", ours, perfVars)
			}
			perfLine := 0
			if m := regexp.MustCompile(`bad config file line (\d+) in`).FindStringSubmatch(stderr.String()); m != nil {
				perfLine, _ = strconv.Atoi(m[1])
			}
			checkErrLine(t, ourErr, perfLine)
		})
	}
}

// TestLoad checks which files Load reads, and in what order, for each
// environment perf distinguishes.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		testenv.WriteFile(t, path, []byte(content))
		return path
	}
	system := write("etc/perfconfig", "[buildid]\ndir = /system\n[a]\nb = system\n")
	badSystem := write("etc/bad", "[buildid]\ndir = /system\n[a]\nflag\n")
	write("home/.perfconfig", "[buildid]\ndir = /user\n")
	write("empty/.perfconfig", "")
	exclusive := write("exclusive", "[a]\nb = exclusive\n")
	huge := write("huge", "[a]\nb = huge\n"+strings.Repeat("# comment\n", 200000))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		system  string
		want    Config
		wantErr string
	}{
		{"user over system", map[string]string{"HOME": home}, system,
			Config{"buildid.dir": "/user", "a.b": "system"}, ""},
		{"PERF_CONFIG only", map[string]string{"HOME": home, "PERF_CONFIG": exclusive}, system,
			Config{"a.b": "exclusive"}, ""},
		{"no system file", map[string]string{"HOME": home}, filepath.Join(dir, "none"),
			Config{"buildid.dir": "/user"}, ""},
		{"PERF_CONFIG_NOSYSTEM", map[string]string{"HOME": home, "PERF_CONFIG_NOSYSTEM": "1"}, system,
			Config{"buildid.dir": "/user"}, ""},
		{"PERF_CONFIG_NOGLOBAL", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "yes"}, system,
			Config{"buildid.dir": "/system", "a.b": "system"}, ""},
		{"PERF_CONFIG_NOGLOBAL false", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "off"}, system,
			Config{"buildid.dir": "/user", "a.b": "system"}, ""},
		{"not a boolean", map[string]string{"HOME": home, "PERF_CONFIG_NOGLOBAL": "maybe"}, system,
			Config{"buildid.dir": "/user", "a.b": "system"}, `PERF_CONFIG_NOGLOBAL="maybe": not a boolean`},
		{"bad system file: user's not read", map[string]string{"HOME": home}, badSystem,
			Config{"buildid.dir": "/system"}, "bad: bad config file line 4"},
		{"empty user file", map[string]string{"HOME": filepath.Join(dir, "empty")}, system,
			Config{"buildid.dir": "/system", "a.b": "system"}, ""},
		{"PERF_CONFIG missing", map[string]string{"HOME": home, "PERF_CONFIG": filepath.Join(dir, "none")}, system,
			Config{}, "no such file"},
		// Only regular files are read: a FIFO would block the open, a
		// device such as /dev/urandom read without end.
		{"PERF_CONFIG a directory", map[string]string{"PERF_CONFIG": dir}, system,
			Config{}, "open " + dir + ": not a regular file (d---------)"},
		{"PERF_CONFIG a FIFO", map[string]string{"PERF_CONFIG": fifo}, system,
			Config{}, "open " + fifo + ": not a regular file (p---------)"},
		{"PERF_CONFIG a device", map[string]string{"PERF_CONFIG": "/dev/urandom"}, system,
			Config{}, "open /dev/urandom: not a regular file (Dc---------)"},
		// Read up to 1 MiB: the values before are kept.
		{"PERF_CONFIG huge", map[string]string{"PERF_CONFIG": huge}, system,
			Config{"a.b": "huge"}, huge + ": read " + huge + ": more than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(func(k string) string { return tc.env[k] }, tc.system)
			if !maps.Equal(got, tc.want) {
				t.Errorf("values %q, want %q", got, tc.want)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestLoadOthersUserFile: a ~/.perfconfig of another user is ignored
// with an error saying so, as perf ignores it with a warning.
func TestLoadOthersUserFile(t *testing.T) {
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
	got, err := Load(func(k string) string { return map[string]string{"HOME": home}[k] }, filepath.Join(home, "none"))
	if len(got) != 0 || err == nil || !strings.Contains(err.Error(), "not owned by the current user or root") {
		t.Errorf("got %q, %v; want nothing, and an error saying why", got, err)
	}
}

func TestBuildIDDir(t *testing.T) {
	env := func(home string) func(string) string {
		return func(k string) string { return map[string]string{"HOME": home}[k] }
	}
	for _, tc := range []struct {
		c    Config
		home string
		want string
	}{
		{Config{"buildid.dir": "/srv/cache"}, "/home/u", "/srv/cache"},
		{Config{"a.b": "c"}, "/home/u", "/home/u/.debug"},
		{Config{}, "", ""},
	} {
		if got := tc.c.BuildIDDir(env(tc.home)); got != tc.want {
			t.Errorf("%q with HOME=%q: %q, want %q", tc.c, tc.home, got, tc.want)
		}
	}
}

// FuzzParse: any file parses without panicking, every value within
// perf's length limit, and an error names a line of the file.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add([]byte(tc.file))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Config{}
		err := c.Parse("f", bytes.NewReader(data))
		for k, v := range c {
			if len(v) > maxValue || len(k) > maxName {
				t.Errorf("variable %q of %d bytes, value of %d", k, len(k), len(v))
			}
		}
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1 || se.Line > strings.Count(string(data), "\n")+2) {
			t.Errorf("error %v: want a syntax error at a line of the file", err)
		}
	})
}
