package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jitpprof/pprof/internal/safename"
	jprofile "github.com/jitpprof/pprof/profile"
)

// A jitFinder finds the JIT sources of a profile: the directories the
// user gave (-jit_dir, Options.JITDirs, -jit_pid's snapshot, else
// $PPROF_JIT_DIR), or those beside the profile, and for a perf.data
// recording the JIT files its processes wrote.
type jitFinder struct {
	flags     jitFlags
	extraDirs []string // Options.JITDirs
	getenv    func(string) string
	live      *liveSnapshot // -jit_pid
	warn      func(string)  // says a message once
}

// dirs returns the JIT object directories for a profile read from the
// local file local ("" for a remote one): the -jit_dir flags and
// Options.JITDirs if any, else $PPROF_JIT_DIR, else the first of the
// profile's directory, the current directory and /pprof_meta that holds
// a JIT object, else the newest directory LLVM's PerfJITEventListener
// wrote.
func (f *jitFinder) dirs(local string) []string {
	if dirs := f.givenDirs(); len(dirs) > 0 {
		return dirs
	}
	var candidates []string
	if local != "" {
		// A recording's own JIT directory (pprof -record's), then its
		// directory.
		candidates = append(candidates, jitDirOf(local), filepath.Dir(local))
	}
	candidates = append(candidates, ".", "/pprof_meta")
	for _, c := range candidates {
		if jprofile.HasObjects(c) {
			return []string{c}
		}
	}
	// Last, where LLVM's PerfJITEventListener writes its jitdumps:
	// $JITDUMPDIR/.debug/jit/llvm-IR-jit-DATE-RANDOM/, else under $HOME;
	// the newest such directory, one per JIT run.
	if d := newestLLVMJITDumpDir(f.getenv); d != "" {
		return []string{d}
	}
	return nil
}

// givenDirs returns the JIT object directories the user gave: the
// -jit_dir flags, Options.JITDirs and -jit_pid's snapshot, else
// $PPROF_JIT_DIR; none if pprof is to look for them.
func (f *jitFinder) givenDirs() []string {
	dirs := f.flags.dirs()
	for _, d := range f.extraDirs {
		dirs = append(dirs, splitDirs(d)...)
	}
	if snap := f.live.dir(); snap != "" {
		dirs = append(dirs, snap)
	}
	if len(dirs) == 0 {
		dirs = splitDirs(f.getenv("PPROF_JIT_DIR"))
	}
	return dirs
}

// newestLLVMJITDumpDir returns the most recently modified
// .debug/jit/llvm-IR-jit-*/ directory holding a jitdump under
// $JITDUMPDIR, else $HOME, or "".
func newestLLVMJITDumpDir(getenv func(string) string) string {
	root := getenv("JITDUMPDIR")
	if root == "" {
		root = getenv("HOME")
	}
	if root == "" {
		return ""
	}
	dirs, _ := filepath.Glob(filepath.Join(root, ".debug", "jit", "llvm-IR-jit-*"))
	best, bestTime := "", time.Time{}
	for _, d := range dirs {
		dumps, _ := filepath.Glob(filepath.Join(d, "jit-*.dump"))
		st, err := os.Stat(d)
		if len(dumps) == 0 || err != nil || !st.IsDir() {
			continue
		}
		if best == "" || st.ModTime().After(bestTime) {
			best, bestTime = d, st.ModTime()
		}
	}
	return best
}

// perfSources returns the JIT sources of a perf.data recording read from
// the local file local that names the JIT source files files and has
// records of the processes pids: the directories of dirs, and the files
// to read besides them. A file no longer where the recording saw it is
// taken from beside the recording, where it may have been copied with
// it; one in neither place is named once. Unless the user gave the
// directories, the files there named after other processes are left out
// (see ofRecorded).
func (f *jitFinder) perfSources(files []string, pids []uint32, local string) (dirs, extra []string) {
	dirs = f.dirs(local)
	var beside []string // of a directory found, the files of recorded processes
	if len(f.givenDirs()) == 0 {
		dirs, beside = f.ofRecorded(dirs, files, pids, local)
	}
	// A file found in the directories anyway, or one of the same name
	// there (a recording copied with its jit-PID.dump, the original still
	// where it was recorded), is not added again.
	inDirs := func(file string) bool {
		for _, d := range dirs {
			if abs, err := filepath.Abs(d); err == nil && abs == filepath.Dir(file) {
				return true
			}
			if st, err := os.Stat(filepath.Join(d, filepath.Base(file))); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
		return false
	}
	for _, file := range files {
		if inDirs(file) {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			beside := filepath.Join(filepath.Dir(local), filepath.Base(file))
			if _, err := os.Stat(beside); err != nil {
				beside = filepath.Join(jitDirOf(local), filepath.Base(file))
			}
			if _, err := os.Stat(beside); err != nil {
				f.warn(fmt.Sprintf("%s: the recording's JIT file %s is gone, and not beside the recording: "+
					"its code stays unsymbolized (copy the file next to %s, or pass -jit_dir)", local, safename.String(file), filepath.Base(local)))
				continue
			}
			file = beside
		}
		extra = append(extra, file)
	}
	for _, file := range beside {
		if !slices.Contains(extra, file) {
			extra = append(extra, file)
		}
	}
	return dirs, extra
}

// jitFilePID matches the names of JIT files that name the process they
// are of: perf-PID.map, jit-PID.dump.
var jitFilePID = regexp.MustCompile(`^(?:perf|jit)-(\d+)\.(?:map|dump)$`)

// ofRecorded returns dirs, the JIT directories pprof found for the
// perf.data recording local (it was not given them), without those
// holding both files named after processes the recording has (in pids,
// or of the names of the recording's files files) and files named after
// others: a directory where several runs were recorded, whose other
// files' code would be taken for the recorded processes' where their
// addresses meet. The other files of such a directory are returned, to
// be read with the recording's own; the ones left out are named once.
// A directory with no file of a recorded process is kept whole: its
// files may be the recording's under other numbers (a container's
// perf-1.map, copied out after the process ended).
func (f *jitFinder) ofRecorded(dirs, files []string, pids []uint32, local string) (kept, beside []string) {
	named := map[string]bool{}
	for _, file := range files {
		named[filepath.Base(file)] = true
	}
	for _, d := range dirs {
		objs, err := jprofile.ObjectFiles(d)
		if err != nil {
			kept = append(kept, d)
			continue
		}
		var mine, others []string
		own := false // a file named after a recorded process is there
		for _, obj := range objs {
			base := filepath.Base(obj[0])
			if m := jitFilePID.FindStringSubmatch(base); m != nil {
				pid, err := strconv.ParseUint(m[1], 10, 32)
				if err == nil && !named[base] && !slices.Contains(pids, uint32(pid)) {
					others = append(others, base)
					continue
				}
				own = true
			}
			mine = append(mine, obj[0]) // an LLVM dump's .meta comes with its .elf
		}
		if len(others) == 0 || !own {
			kept = append(kept, d)
			continue
		}
		beside = append(beside, mine...)
		f.warn(fmt.Sprintf("%s: JIT files in %s of processes it did not record are not used: %s (pass -jit_dir=%s to use them)", local, d, listed(others), d))
	}
	return kept, beside
}

// listed joins the first few of names, and says how many more there are.
func listed(names []string) string {
	const most = 3
	list := strings.Join(names[:min(len(names), most)], ", ")
	if len(names) > most {
		list += fmt.Sprintf(" and %d more", len(names)-most)
	}
	return list
}

// dedupDirs returns dirs made absolute and without duplicates.
func dedupDirs(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
