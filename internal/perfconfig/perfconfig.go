// Package perfconfig finds the directory of Linux perf's build-ID cache,
// where perf record keeps a copy of every file it samples and perf
// report looks for them, as perf finds it: the variable buildid.dir of
// perf's configuration files (perf-config(1)), else $HOME/.debug.
//
// perf reads only the file $PERF_CONFIG names, if it is set; otherwise
// /etc/perfconfig (unless $PERF_CONFIG_NOSYSTEM is true), then
// $HOME/.perfconfig (unless $PERF_CONFIG_NOGLOBAL is true), whose values
// override the system's. The syntax is git's; this package reads of it
// what "dir" in a "[buildid]" section needs: headers, comments from '#'
// or ';', a value's double quotes, its \t, \n, \b, \\ and \" escapes and
// a backslash continuing it on the next line. Other sections' lines are
// not checked: where perf stops at a bad line before [buildid], and so
// never sees buildid.dir, the directory is still found here.
package perfconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// SystemFile is perf's system-wide configuration file (Debian's perf is
// built with prefix /usr, which puts it in /etc).
const SystemFile = "/etc/perfconfig"

// A SyntaxError is a line of a [buildid] section perf cannot parse. perf
// stops reading the file there, keeping the values before it.
type SyntaxError struct {
	File string // the file's path
	Line int    // 1-based
}

func (e *SyntaxError) Error() string {
	// perf's own message, "bad config file line N in FILE".
	return fmt.Sprintf("%s: bad config file line %d", safename.String(e.File), e.Line)
}

// maxFileBytes bounds how much of a configuration file is read: perf's
// own are a few hundred bytes, and one that another program keeps
// appending to must not keep pprof reading.
const maxFileBytes = 1 << 20

// BuildIDDir returns the directory of perf's build-ID cache as perf
// record and perf report find it, with getenv for the environment and
// system for /etc/perfconfig: buildid.dir of perf's configuration files
// (see the package comment), else $HOME/.debug, else "" (perf's default
// without HOME is ".debug" in its working directory, which pprof does
// not guess). A file that cannot be read or parsed makes an error naming
// it, and dir is what the files gave before it; as in perf, a bad system
// file keeps the user's from being read.
func BuildIDDir(getenv func(string) string, system string) (dir string, err error) {
	dir, ok, err := configured(getenv, system)
	if !ok {
		dir = ""
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, ".debug")
		}
	}
	return dir, err
}

// configured returns buildid.dir of perf's configuration files, and
// whether one sets it.
func configured(getenv func(string) string, system string) (dir string, ok bool, err error) {
	if name := getenv("PERF_CONFIG"); name != "" {
		return readFile(name)
	}
	var errs []error
	noSystem, err := envBool(getenv, "PERF_CONFIG_NOSYSTEM")
	errs = append(errs, err)
	if !noSystem {
		d, found, err := readFile(system)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			err = nil // perf reads the system file only if it can (access R_OK)
		}
		if found {
			dir, ok = d, true
		}
		if err != nil {
			return dir, ok, errors.Join(append(errs, err)...)
		}
	}
	noGlobal, err := envBool(getenv, "PERF_CONFIG_NOGLOBAL")
	errs = append(errs, err)
	if home := getenv("HOME"); !noGlobal && home != "" {
		d, found, err := readUserFile(filepath.Join(home, ".perfconfig"))
		if found {
			dir, ok = d, true
		}
		errs = append(errs, err)
	}
	return dir, ok, errors.Join(errs...)
}

// readFile returns buildid.dir of the file name. Only a regular file is
// read (regfile): a FIFO named by $PERF_CONFIG would block an open, a
// device such as /dev/urandom read without end.
func readFile(name string) (dir string, ok bool, err error) {
	f, err := regfile.OpenLimited(name, maxFileBytes)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	return parse(name, f)
}

// readUserFile is readFile for the user's file, which, as perf decides,
// is not read if it is missing, empty, or owned by another user than the
// current one or root.
func readUserFile(name string) (dir string, ok bool, err error) {
	fi, err := os.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, err
	}
	if uid, ok := owner(fi); ok && uid != 0 && uid != os.Geteuid() {
		return "", false, fmt.Errorf("%s is not owned by the current user or root: ignored, as perf does", safename.String(name))
	}
	if fi.Size() == 0 {
		return "", false, nil
	}
	return readFile(name)
}

// envBool reads the environment variable key as perf's boolean
// (perf_env_bool): unset or empty is false; true, yes, on and a non-zero
// number are true; false, no, off and zero are false. Anything else is
// an error (perf exits), and false.
func envBool(getenv func(string) string, key string) (bool, error) {
	v := getenv(key)
	switch strings.ToLower(v) {
	case "", "false", "no", "off":
		return false, nil
	case "true", "yes", "on":
		return true, nil
	}
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("%s=%q: not a boolean, taken as false", key, v)
}

// maxValue is the longest value perf's parser keeps; a longer one is a
// syntax error.
const maxValue = 1024 - 1

// parse returns the last value of buildid.dir in the file r holds; file
// names it in errors.
func parse(file string, r io.Reader) (dir string, ok bool, err error) {
	s := bufio.NewScanner(r)
	s.Buffer(nil, maxFileBytes+1)
	section := ""
	for line := 1; s.Scan(); line++ {
		text := strings.TrimSuffix(s.Text(), "\r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\xef\xbb\xbf") // a byte order mark
		}
		text = strings.TrimLeft(text, " \t\v\f")
		if strings.HasPrefix(text, "[") {
			// "[name]" or `[name "subsection"]`: buildid.dir is only in
			// the first form. perf lower-cases section names.
			name, _, _ := strings.Cut(text[1:], "]")
			section = strings.ToLower(name)
			continue
		}
		// perf lower-cases only a variable name's first letter: "Dir"
		// is dir, "dIR" another variable.
		name, rest, hasValue := strings.Cut(text, "=")
		name = strings.TrimRight(name, " \t")
		if section != "buildid" || (name != "dir" && name != "Dir") {
			continue
		}
		start := line
		value, good := valueOf(rest, func() (string, bool) {
			if !s.Scan() {
				return "", false
			}
			line++
			return strings.TrimSuffix(s.Text(), "\r"), true
		})
		if !hasValue || !good {
			return dir, ok, &SyntaxError{File: file, Line: start}
		}
		dir, ok = value, true
	}
	if err := s.Err(); err != nil {
		return dir, ok, fmt.Errorf("%s: %w", safename.String(file), err)
	}
	return dir, ok, nil
}

// valueOf reads the value after a variable's '=' as perf's parser
// (parse_value) does: white space at its start and end dropped and each
// run of it inside one space, quotes removed, escapes replaced, a
// comment ending it, a backslash at the end of a line continuing it on
// the line next returns. It reports false for an open quote at the end,
// an unknown escape or a value of perf's maximum length or longer.
func valueOf(s string, next func() (string, bool)) (string, bool) {
	var v []byte
	quote, space := false, false
	for i := 0; ; i++ {
		if len(v) >= maxValue {
			return "", false
		}
		if i == len(s) {
			return string(v), !quote
		}
		c := s[i]
		if !quote {
			if isSpace(c) {
				space = true
				continue
			}
			if c == ';' || c == '#' {
				return string(v), true
			}
		}
		if space {
			if len(v) > 0 {
				v = append(v, ' ')
			}
			space = false
		}
		switch c {
		case '"':
			quote = !quote
			continue
		case '\\':
			if i++; i == len(s) {
				more, ok := next()
				if !ok {
					return string(v), !quote
				}
				s, i = more, -1
				continue
			}
			switch c = s[i]; c {
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
		}
		v = append(v, c)
	}
}

// isSpace is the C library's isspace in the C locale, which perf's
// parser uses.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
