// Package srcfile keeps pprof's source views from opening source files
// that are not regular files.
//
// Upstream pprof's -list and -weblist reports and the source page of its
// web UI open, with os.Open, each source file a profile's functions
// name, and read it whole, line by line. A name that debug information
// or a JIT's line table gives, pointing at a FIFO, blocks that open for
// ever (the web UI's page never answers); at /dev/urandom, the read never
// ends and runs out of memory. jitpprof cannot change upstream's reports,
// so it checks the names where it hands them to upstream: the object
// tool's answers and the JIT stage's frames. A name that leads where
// upstream would look to something other than a regular file or a
// directory is handed on with " (not a regular file)" appended, which no
// search finds (upstream then says it cannot find the file), and a
// warning names the file.
//
// Where upstream looks is followed for its default settings: an
// absolute name as it is, a relative one in the working directory and
// each of its parents, after the prefixes its trimPath takes off. With
// -source_path or -trim_path, upstream may look elsewhere, and a file
// may become a FIFO after the check: the seam that would close both,
// upstream opening source files with O_NONBLOCK and checking them, is
// not there to use.
package srcfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/safename"
)

// Suffix is appended to a name that leads to something other than a
// regular file.
const Suffix = " (not a regular file)"

// A Guard checks source file names, each once. It is safe for
// concurrent use.
type Guard struct {
	dir   string // where upstream's search starts: the working directory
	warn  func(msg string)
	names sync.Map // file name -> the name to hand on; read far more than written
}

// New returns a Guard that tells warn, if not nil, of each name it
// changes. The working directory is taken now.
func New(warn func(msg string)) *Guard {
	dir, _ := os.Getwd()
	return newIn(dir, warn)
}

// newIn returns a Guard for a process whose working directory is dir.
func newIn(dir string, warn func(msg string)) *Guard {
	return &Guard{dir: dir, warn: warn}
}

// Name returns file, or, if upstream's source views would open something
// other than a regular file or a directory for it, file with Suffix (or
// "" if that name leads to one too).
func (g *Guard) Name(file string) string {
	if g == nil || file == "" {
		return file
	}
	if name, ok := g.names.Load(file); ok {
		return name.(string)
	}
	safe, why := g.check(file)
	if name, loaded := g.names.LoadOrStore(file, safe); loaded {
		return name.(string) // another goroutine checked it first, and said so
	}
	if why != "" && g.warn != nil {
		g.warn(why)
	}
	return safe
}

// check returns the name Name returns for file, and, if it is another,
// a message saying why.
func (g *Guard) check(file string) (name, why string) {
	path, mode, found := g.find(file)
	if !found || mode.IsRegular() || mode.IsDir() {
		return file, ""
	}
	safe := file + Suffix
	if _, mode, found := g.find(safe); found && !mode.IsRegular() && !mode.IsDir() {
		safe = ""
	}
	return safe, fmt.Sprintf("source file %s: %s is %s, not a regular file: pprof's source views would wait on it or read it without end; it is named %q instead",
		safename.String(file), safename.String(path), kind(mode), safe)
}

// find returns what upstream pprof's source views open for the name file
// (report.openSourceFile with the search path it defaults to, the
// working directory, and no trim path): its path and mode, and whether
// there is one. It follows upstream's logic.
func (g *Guard) find(file string) (path string, mode fs.FileMode, found bool) {
	path = trimPath(file, g.dir)
	if filepath.IsAbs(path) {
		st, err := os.Stat(path)
		if err != nil {
			return "", 0, false
		}
		return path, st.Mode(), true
	}
	if g.dir == "" {
		return "", 0, false
	}
	for dir := g.dir; ; {
		name := filepath.Join(dir, path)
		if st, err := os.Stat(name); err == nil {
			return name, st.Mode(), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", 0, false
		}
		dir = parent
	}
}

// trimPath is upstream's report.trimPath for the search path dir and no
// trim path: the part after "/BASE/" of dir's base name, if the name has
// one, else the name without /proc/self/cwd/.
func trimPath(path, dir string) string {
	sPath := filepath.ToSlash(path)
	if dir != "" {
		if i := strings.Index(sPath, "/"+filepath.Base(dir)+"/"); i != -1 {
			return path[i+len(filepath.Base(dir))+2:]
		}
	}
	for _, prefix := range []string{"/proc/self/cwd/./", "/proc/self/cwd/"} {
		if strings.HasPrefix(sPath, prefix) {
			return path[len(prefix):]
		}
	}
	return path
}

// kind names the type of file of mode.
func kind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return fmt.Sprintf("a file of mode %v", mode.Type())
}
