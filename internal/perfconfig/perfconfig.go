// Package perfconfig reads the configuration files of Linux perf
// (perf-config(1)) the way perf does, for the one setting pprof shares
// with it: the directory of perf's build-ID cache (buildid.dir), where
// perf record keeps a copy of every file it samples and perf report
// looks for them.
//
// perf reads only the file $PERF_CONFIG names, if it is set; otherwise
// /etc/perfconfig (unless $PERF_CONFIG_NOSYSTEM is true), then
// $HOME/.perfconfig (unless $PERF_CONFIG_NOGLOBAL is true), whose values
// override the system's. The syntax is git's: "[section]" or
// "[section "subsection"]" headers, "name = value" lines, comments from
// '#' or ';', values in double quotes with \t, \n, \b, \\ and \" escapes,
// and a backslash at the end of a line continuing the value.
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
	"syscall"

	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// SystemFile is perf's system-wide configuration file (Debian's perf is
// built with prefix /usr, which puts it in /etc).
const SystemFile = "/etc/perfconfig"

// Config is the variables read from perf's configuration files, each
// under its full name ("buildid.dir", or "section.subsection.name"),
// with the last value it was given.
type Config map[string]string

// A SyntaxError is a line of a configuration file perf cannot parse.
// perf stops reading the file there, keeping the values before it.
type SyntaxError struct {
	File string // the file's path
	Line int    // 1-based
}

func (e *SyntaxError) Error() string {
	// perf's own message, "bad config file line N in FILE".
	return fmt.Sprintf("%s: bad config file line %d", safename.String(e.File), e.Line)
}

// Limits of perf's parser (MAXNAME and its value buffer): a longer
// section, variable name or value is a syntax error.
const (
	maxName    = 256
	maxSection = maxName / 2
	maxValue   = 1024 - 1
)

// Parse reads one configuration file's content from r into c; file
// names it in errors. After a *SyntaxError c holds the values before the
// bad line. It reads r a byte at a time, as perf does, and no further
// than the first error: memory stays bounded by perf's limits whatever r
// holds (a stream of zeros fails at its first byte).
func (c Config) Parse(file string, r io.Reader) error {
	p := parser{r: bufio.NewReader(r), line: 1}
	err := p.parse(c)
	switch {
	case p.err != nil:
		return fmt.Errorf("%s: %w", safename.String(file), p.err)
	case err != nil:
		return &SyntaxError{File: file, Line: p.line}
	}
	return nil
}

// Load reads perf's configuration files as perf does (see the package
// comment), with getenv for the environment and system for
// /etc/perfconfig. A file that cannot be read or parsed makes an error
// naming it; the values read before are kept, and, as in perf, a bad
// system file keeps the user's from being read.
func Load(getenv func(string) string, system string) (Config, error) {
	c := Config{}
	if name, ok := lookupEnv(getenv, "PERF_CONFIG"); ok {
		return c, c.readFile(name)
	}
	var errs []error
	noSystem, err := envBool(getenv, "PERF_CONFIG_NOSYSTEM")
	errs = append(errs, err)
	if !noSystem {
		err := c.readFile(system)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			err = nil // perf reads the system file only if it can (access R_OK)
		}
		if err != nil {
			return c, errors.Join(append(errs, err)...)
		}
	}
	noGlobal, err := envBool(getenv, "PERF_CONFIG_NOGLOBAL")
	errs = append(errs, err)
	if home := getenv("HOME"); !noGlobal && home != "" {
		errs = append(errs, c.readUserFile(filepath.Join(home, ".perfconfig")))
	}
	return c, errors.Join(errs...)
}

// maxFileBytes bounds how much of a configuration file is read: perf's
// own are a few hundred bytes, and one that another program keeps
// appending to must not keep pprof reading.
const maxFileBytes = 1 << 20

// readFile parses the file name into c. Only a regular file is read
// (regfile): a FIFO named by $PERF_CONFIG would block an open, a device
// such as /dev/urandom read without end.
func (c Config) readFile(name string) error {
	f, err := regfile.OpenLimited(name, maxFileBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.Parse(name, f)
}

// readUserFile parses the user's file name into c unless, as perf
// decides, it is missing, empty, or owned by another user than the
// current one or root.
func (c Config) readUserFile(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not owned by the current user or root: ignored, as perf does", safename.String(name))
	}
	if fi.Size() == 0 {
		return nil
	}
	return c.readFile(name)
}

// BuildIDDir returns the directory of perf's build-ID cache as perf
// record and perf report find it: buildid.dir of c, else $HOME/.debug,
// else "" (perf's default without HOME is ".debug" in its working
// directory, which pprof does not guess).
func (c Config) BuildIDDir(getenv func(string) string) string {
	if dir, ok := c["buildid.dir"]; ok {
		return dir
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".debug")
	}
	return ""
}

// lookupEnv reports the value of the environment variable key and
// whether it is set; getenv cannot tell an empty variable from an unset
// one, so an empty one counts as unset.
func lookupEnv(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

// envBool reads the environment variable key as perf's boolean
// (perf_env_bool): unset is false; true, yes, on and a non-zero number
// are true; false, no, off, empty and zero are false. Anything else is an
// error (perf exits), and false.
func envBool(getenv func(string) string, key string) (bool, error) {
	v, ok := lookupEnv(getenv, key)
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("%s=%q: not a boolean, taken as false", key, v)
}

// parser reads one file character by character, as perf's parser (from
// git's) does: the syntax errors it finds and the line it reports for
// each follow perf's, which the tests compare with perf's own.
type parser struct {
	r    *bufio.Reader
	line int   // the line being read, 1-based, as perf counts it
	eof  bool  // the end of the file was read (as a '\n')
	err  error // an error reading the file, which ends it
}

// next returns the next character: "\r\n" reads as '\n', and the end of
// the file as '\n' with eof set.
func (p *parser) next() byte {
	if p.eof {
		return '\n'
	}
	c, err := p.r.ReadByte()
	if err != nil {
		if err != io.EOF {
			p.err = err
		}
		p.eof = true
		return '\n'
	}
	if c == '\r' {
		if b, err := p.r.Peek(1); err == nil && b[0] == '\n' {
			p.r.ReadByte()
			c = '\n'
		}
	}
	if c == '\n' {
		p.line++
	}
	return c
}

var errSyntax = errors.New("syntax error")

// parse reads the file's variables into c (perf_parse_file).
func (p *parser) parse(c Config) error {
	section := ""
	comment := false
	// A UTF-8 byte order mark at the start is skipped; a partial one is
	// an error.
	const bom = "\xef\xbb\xbf"
	if b, _ := p.r.Peek(len(bom)); len(b) > 0 && b[0] == bom[0] {
		if string(b) != bom {
			return errSyntax
		}
		p.r.Discard(len(bom))
	}
	for {
		ch := p.next()
		switch {
		case ch == '\n':
			if p.eof {
				return nil
			}
			comment = false
		case comment || isSpace(ch):
		case ch == '#' || ch == ';':
			comment = true
		case ch == '[':
			s, err := p.sectionName()
			if err != nil {
				return err
			}
			section = s
		case isAlpha(ch):
			line := p.line
			if err := p.variable(c, section, ch); err != nil {
				p.line = line
				return err
			}
		default:
			return errSyntax
		}
	}
}

// sectionName reads a section header after its '[' (get_base_var): the
// name, lower-cased, and a subsection in double quotes, kept as written.
func (p *parser) sectionName() (string, error) {
	var name []byte
	for {
		ch := p.next()
		switch {
		case p.eof:
			return "", errSyntax
		case ch == ']':
			if len(name) == 0 {
				return "", errSyntax
			}
			return string(name), nil
		case isSpace(ch):
			return p.subsection(name, ch)
		case !isKeyChar(ch) && ch != '.', len(name) > maxSection:
			return "", errSyntax
		}
		name = append(name, toLower(ch))
	}
}

// subsection reads the quoted subsection of a header, after the space
// ch that ended its section name (get_extended_base_var).
func (p *parser) subsection(name []byte, ch byte) (string, error) {
	for {
		if ch == '\n' {
			return "", errSyntax
		}
		if ch = p.next(); !isSpace(ch) {
			break
		}
	}
	if ch != '"' {
		return "", errSyntax
	}
	name = append(name, '.')
	for {
		ch := p.next()
		if ch == '\n' {
			return "", errSyntax
		}
		if ch == '"' {
			break
		}
		if ch == '\\' {
			if ch = p.next(); ch == '\n' {
				return "", errSyntax
			}
		}
		name = append(name, ch)
		if len(name) > maxSection {
			return "", errSyntax
		}
	}
	if p.next() != ']' {
		return "", errSyntax
	}
	return string(name), nil
}

// variable reads a "name = value" line whose name starts with first
// (get_value). A name without a value is an error in perf, which keeps
// only variables with values. Unlike git, perf lower-cases only a name's
// first letter: "Dir" is "dir", "dIR" another variable.
func (p *parser) variable(c Config, section string, first byte) error {
	name := []byte{toLower(first)}
	var ch byte
	for {
		ch = p.next()
		if p.eof || !isKeyChar(ch) {
			break
		}
		name = append(name, ch) // perf lower-cases only the first
		if len(section)+1+len(name) >= maxName {
			return errSyntax
		}
	}
	for ch == ' ' || ch == '\t' {
		ch = p.next()
	}
	if ch != '=' {
		return errSyntax
	}
	value, err := p.value()
	if err != nil {
		return err
	}
	if section == "" {
		return errSyntax // perf's variables are all "section.name"
	}
	c[section+"."+string(name)] = value
	return nil
}

// value reads a value after its '=' (parse_value): leading and trailing
// white space dropped, each run of it inside one space, quotes removed,
// escapes replaced, a comment ending it.
func (p *parser) value() (string, error) {
	var v []byte
	quote, comment, space := false, false, false
	for {
		ch := p.next()
		if len(v) >= maxValue {
			return "", errSyntax
		}
		switch {
		case ch == '\n':
			if quote {
				return "", errSyntax
			}
			return string(v), nil
		case comment:
			continue
		case isSpace(ch) && !quote:
			space = true
			continue
		case !quote && (ch == ';' || ch == '#'):
			comment = true
			continue
		}
		if space {
			if len(v) > 0 {
				v = append(v, ' ')
			}
			space = false
		}
		switch ch {
		case '\\':
			switch ch = p.next(); ch {
			case '\n':
				continue
			case 't':
				ch = '\t'
			case 'b':
				ch = '\b'
			case 'n':
				ch = '\n'
			case '\\', '"':
			default:
				return "", errSyntax
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, ch)
	}
}

// The C library's character classes in the C locale, which perf's
// parser uses.
func isSpace(c byte) bool   { return c == ' ' || (c >= '\t' && c <= '\r') }
func isAlpha(c byte) bool   { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isKeyChar(c byte) bool { return isAlpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' }
func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
