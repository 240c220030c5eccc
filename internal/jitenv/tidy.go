package jitenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tidied is what Tidy did.
type Tidied struct {
	// Moved are the jitdumps moved, by their new paths in the
	// destination directory.
	Moved []string
	// Removed are V8's logs removed.
	Removed []string
	// Left are the jitdumps left where they were, with the reason.
	Left []error
}

// jitdumpName is the name every jitdump writer gives its file.
var jitdumpName = regexp.MustCompile(`^jit-([0-9]+)\.dump$`)

// Tidy keeps the user's directories clean after a recording of a command
// started with Enable's environment. jitdumps are the paths of the
// jitdumps the recording names (the files its processes mapped, which
// perf.data's MMAP records give): each named jit-PID.dump, outside /tmp,
// and modified at or after since (when the recording started) is moved
// into dest, the recording's directory, where jitpprof's perf.data reader
// looks for the JIT files of a recording when they are no longer where it
// was made; V8's logs of the same process beside it
// (isolate-0xADDR-PID-v8.log, modified at or after since), which
// --perf-prof made Node.js 20 write, are removed.
//
// A jitdump in /tmp (Erlang's, .NET's) is where the convention puts it
// and stays there. One that cannot be moved (dest has a file of that
// name) is left in place, where the reader still finds it, and listed in
// Left. The error is for a failure to move or remove a file.
func Tidy(dest string, jitdumps []string, since time.Time) (Tidied, error) {
	var t Tidied
	var errs []error
	for _, path := range jitdumps {
		m := jitdumpName.FindStringSubmatch(filepath.Base(path))
		dir := filepath.Dir(path)
		if m == nil || dir == "/tmp" {
			continue
		}
		if !recent(path, since) {
			continue
		}
		to := filepath.Join(dest, filepath.Base(path))
		if same, err := sameFile(path, to); err == nil && !same {
			t.Left = append(t.Left, fmt.Errorf("%s not moved: %s exists", path, to))
		} else if !same {
			if err := move(path, to); err != nil {
				errs = append(errs, err)
				continue
			}
			t.Moved = append(t.Moved, to)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "isolate-0x*-"+m[1]+"-v8.log"))
		for _, l := range logs {
			if !v8Log(l, m[1]) || !recent(l, since) {
				continue
			}
			if err := os.Remove(l); err != nil {
				errs = append(errs, err)
				continue
			}
			t.Removed = append(t.Removed, l)
		}
	}
	return t, errors.Join(errs...)
}

// v8Log reports whether name is exactly isolate-0xHEX-PID-v8.log.
func v8Log(path, pid string) bool {
	mid, ok := strings.CutPrefix(filepath.Base(path), "isolate-0x")
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, "-"+pid+"-v8.log")
	_, err := strconv.ParseUint(mid, 16, 64)
	return ok && err == nil
}

// recent reports whether path is a regular file modified at or after
// since.
func recent(path string, since time.Time) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(since)
}

// sameFile reports whether a and b are the same file; an error if b does
// not exist.
func sameFile(a, b string) (bool, error) {
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// move renames from to to, or copies and removes it across file
// systems.
func move(from, to string) error {
	err := os.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(to)
		return fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(to)
		return fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	return os.Remove(from)
}
