package driver

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/cfi"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsnap"
	"github.com/jitpprof/pprof/internal/objtool"
	"github.com/jitpprof/pprof/internal/oncemap"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/symbolizer"
	jprofile "github.com/jitpprof/pprof/profile"
)

// Values of -jit_symbolizer.
const (
	jitSymInProcess = "inprocess"
	jitSymBinutils  = "binutils"
)

// jitUsage is the help text for the JIT flags.
const jitUsage = `  JIT code (jitpprof):
    -jit_dir              Directories holding JIT objects (NAME.elf + NAME.meta,
                          perf-PID.map, jit-PID.dump)
                          Comma- or path-list-separated; may be repeated.
                          Default: $PPROF_JIT_DIR, else the first of the
                          profile's directory, the current directory and
                          /pprof_meta that holds JIT objects.
    -jit_symbolizer       How JIT objects are symbolized: inprocess (default:
                          read each object once, in pprof) or binutils (left
                          to pprof's symbolizer and its object tool; see
                          -objtool)
    -jit_pid              Snapshot the JIT objects of this live process through
                          the GDB JIT interface (as jitsnap does) and use them`

// jitStage runs the extended-mapping stage for every fetched profile and
// symbolizes the JIT objects it attaches. It is shared by the concurrent
// Fetch calls of one run.
type jitStage struct {
	ui         UI
	flags      *flagRecorder
	dirFlag    *[]*string
	symFlag    *string
	pidFlag    *int
	extraDirs  []string
	getenv     func(string) string
	syms       *symbolizer.Cache
	tool       *objtool.Tool // shares its parsed objects with the JIT stage; may be nil
	progressAt time.Duration // delay before progress is shown
	stderrTTY  bool

	loads oncemap.Map[string, loadedSet]           // by directory list
	sets  oncemap.Map[string, *jprofile.ObjectSet] // the same, once reported
	links oncemap.Map[string, string]              // perfDirs' temporary directory, by file list
	// warming counts the goroutines that load objects and start the
	// object tool on them ahead of the stage (see preload and warmer);
	// warm is the tool's Warm, or nil without a tool.
	warming sync.WaitGroup
	warm    func(path string)

	mu       sync.Mutex
	warned   map[string]bool
	tempDirs []string          // removed by close
	linked   map[string]string // perfDirs' temporary directories: what they link, for messages

	snapOnce sync.Once
	snapDir  string // the -jit_pid snapshot, "" if none was taken
}

func newJIT(flags *flagRecorder, ui UI, extraDirs []string, getenv func(string) string, tool *objtool.Tool) *jitStage {
	flags.AddExtraUsage(jitUsage)
	j := &jitStage{
		ui:         ui,
		flags:      flags,
		dirFlag:    flags.StringList("jit_dir", "", "Directories holding JIT objects (NAME.elf, NAME.meta, perf-*.map, jit-*.dump)"),
		symFlag:    flags.String("jit_symbolizer", jitSymInProcess, "How JIT objects are symbolized: inprocess or binutils"),
		pidFlag:    flags.Int("jit_pid", 0, "Snapshot the JIT objects of this live process and use them"),
		extraDirs:  extraDirs,
		getenv:     getenv,
		progressAt: time.Second,
		stderrTTY:  isTerminal(os.Stderr),
		warned:     map[string]bool{},
		tool:       tool,
	}
	if tool != nil {
		j.warm = tool.Warm
	}
	j.syms = symbolizer.NewCache(j.openInProcess)
	return j
}

func (j *jitStage) close() {
	j.warming.Wait()
	j.syms.Close()
	for _, d := range j.tempDirs {
		os.RemoveAll(d)
	}
	if j.snapDir != "" {
		os.RemoveAll(j.snapDir)
	}
}

// warnOnce prints msg unless it was printed already in this run.
func (j *jitStage) warnOnce(msg string) {
	j.mu.Lock()
	seen := j.warned[msg]
	j.warned[msg] = true
	j.mu.Unlock()
	if !seen {
		j.ui.PrintErr(msg)
	}
}

// extend runs the stage on p, fetched from src, which is the local file
// local if that is not "", with memoryMap the legacy memory map of its
// data, if any (see jprofile.Parse).
func (j *jitStage) extend(p *profile.Profile, src string, memoryMap []byte, local string) {
	j.extendDirs(p, src, memoryMap, j.dirs(local))
}

// extendFiles runs the stage on p, read from the local file local, with
// the JIT source files files (those a perf.data recording names) besides
// the directories it would use anyway. The files are linked into a
// temporary directory, removed when the run ends.
func (j *jitStage) extendFiles(p *profile.Profile, src string, files []string, pids []uint32, local string) {
	if j.unneeded(p, nil) {
		return // before perfDirs links the files
	}
	j.apply(p, src, nil, j.perfDirs(files, pids, local))
}

// unneeded reports whether the stage has nothing to do for p, with
// memoryMap its legacy memory map if it has one: no location of p could
// be JIT code (see jprofile.MayHoldJIT), so JIT files pprof finds around
// it are another run's, which are then neither read nor reported. JIT
// directories the user gave are always read, and what is wrong with
// them said (their objects' sections over the profile's files
// included). A legacy profile's mappings are only known once the stage
// has read its memory map.
func (j *jitStage) unneeded(p *profile.Profile, memoryMap []byte) bool {
	return memoryMap == nil && len(j.givenDirs()) == 0 && !jprofile.MayHoldJIT(p)
}

// perfDirs returns the JIT directories of a perf.data recording read from
// the local file local that names the JIT source files files and has
// records of the processes pids: those of j.dirs, and a temporary
// directory linking the files not in them, made once per run and removed
// when it ends. A file no longer where the recording saw it is taken
// from beside the recording, where it may have been copied with it; one
// in neither place is named once. Unless the user gave the directories,
// the files there named after other processes are left out (see
// ofRecorded).
func (j *jitStage) perfDirs(files []string, pids []uint32, local string) []string {
	dirs := j.dirs(local)
	var beside []string // of a directory found, the files of recorded processes
	if len(j.givenDirs()) == 0 {
		dirs, beside = j.ofRecorded(dirs, files, pids, local)
	}
	// A file found in the directories anyway, or one of the same name
	// there (a recording copied with its jit-PID.dump, the original still
	// where it was recorded), is not added again.
	inDirs := func(f string) bool {
		for _, d := range dirs {
			if abs, err := filepath.Abs(d); err == nil && abs == filepath.Dir(f) {
				return true
			}
			if st, err := os.Stat(filepath.Join(d, filepath.Base(f))); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
		return false
	}
	var link []string
	for _, f := range files {
		if inDirs(f) {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			beside := filepath.Join(filepath.Dir(local), filepath.Base(f))
			if _, err := os.Stat(beside); err != nil {
				j.warnOnce(fmt.Sprintf("%s: the recording's JIT file %s is gone, and not beside the recording: "+
					"its code stays unsymbolized (copy the file next to %s, or pass -jit_dir)", local, f, filepath.Base(local)))
				continue
			}
			f = beside
		}
		link = append(link, f)
	}
	for _, f := range beside {
		if !slices.Contains(link, f) {
			link = append(link, f)
		}
	}
	if len(link) == 0 {
		return dirs
	}
	dir, _ := j.links.Get(strings.Join(link, "\x00"), func() string {
		dir, err := os.MkdirTemp("", "pprof-perf-jit-")
		if err != nil {
			j.warnOnce(fmt.Sprintf("%s: its JIT files are not used: %v", local, err))
			return ""
		}
		j.mu.Lock()
		j.tempDirs = append(j.tempDirs, dir)
		if j.linked == nil {
			j.linked = map[string]string{}
		}
		j.linked[dir] = linkedFiles(local, link)
		j.mu.Unlock()
		taken := map[string]bool{}
		for _, f := range link {
			// Two containers' processes may both be PID 1 in their
			// own: jit-1.dump, jit-1.2.dump.
			name := filepath.Base(f)
			ext := filepath.Ext(name)
			for n := 2; taken[name]; n++ {
				name = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(filepath.Base(f), ext), n, ext)
			}
			taken[name] = true
			os.Symlink(f, filepath.Join(dir, name))
		}
		return dir
	})
	if dir != "" {
		dirs = append(dirs, dir)
	}
	return dirs
}

// extendDirs runs the stage on p, fetched from src, with the JIT objects
// of dirs, unless it has nothing to do (see unneeded).
func (j *jitStage) extendDirs(p *profile.Profile, src string, memoryMap []byte, dirs []string) {
	if j.unneeded(p, memoryMap) {
		return
	}
	j.apply(p, src, memoryMap, dirs)
}

// apply runs the stage on p, fetched from src, with the JIT objects of
// dirs (extendDirs, once the stage is found needed).
func (j *jitStage) apply(p *profile.Profile, src string, memoryMap []byte, dirs []string) {
	set := j.objects(dirs)
	res, err := jprofile.Extend(p, memoryMap, set)
	if err != nil {
		j.warnOnce(fmt.Sprintf("%s: JIT stage skipped: %v", src, err))
		return
	}
	if len(res.JIT) == 0 {
		j.hintAnonymous(p, src)
	}
	if memoryMap != nil && len(memoryMap) == 0 && len(res.JIT) > 0 {
		j.warnOnce(fmt.Sprintf("%s: legacy profile with no memory map (MAPPED_LIBRARIES): "+
			"JIT code is found by its JIT sections alone, other code cannot be symbolized", src))
	}
	if res.Conflicts > 0 {
		j.warnOnce(fmt.Sprintf("%s: %d addresses lie both in JIT object sections and in file mappings of the profile; "+
			"they keep the profile's mapping (were the JIT objects dumped by another run?)", src, res.Conflicts))
	}
	if len(res.JIT) == 0 || !j.inProcess() {
		return
	}
	j.symbolize(p, res.JIT)
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
// be linked with the recording's own; the ones left out are named once.
// A directory with no file of a recorded process is kept whole: its
// files may be the recording's under other numbers (a container's
// perf-1.map, copied out after the process ended).
func (j *jitStage) ofRecorded(dirs, files []string, pids []uint32, local string) (kept, beside []string) {
	named := map[string]bool{}
	for _, f := range files {
		named[filepath.Base(f)] = true
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
			mine = append(mine, obj...)
		}
		if len(others) == 0 || !own {
			kept = append(kept, d)
			continue
		}
		beside = append(beside, mine...)
		list := strings.Join(others[:min(len(others), 3)], ", ")
		if len(others) > 3 {
			list += fmt.Sprintf(" and %d more", len(others)-3)
		}
		j.warnOnce(fmt.Sprintf("%s: JIT files in %s of processes it did not record are not used: %s (pass -jit_dir=%s to use them)", local, d, list, d))
	}
	return kept, beside
}

// linkedFiles describes the JIT files files of the perf.data recording
// local, linked into a temporary directory, for messages.
func linkedFiles(local string, files []string) string {
	const most = 3
	list := strings.Join(files[:min(len(files), most)], ", ")
	if len(files) > most {
		list += fmt.Sprintf(" and %d more", len(files)-most)
	}
	return fmt.Sprintf("the JIT files %s names (%s)", filepath.Base(local), list)
}

// dirs returns the JIT object directories for a profile read from the
// local file local ("" for a remote one): the -jit_dir flags and
// Options.JITDirs if any, else $PPROF_JIT_DIR, else the first of the
// profile's directory, the current directory and /pprof_meta that holds
// a JIT object.
func (j *jitStage) dirs(local string) []string {
	if dirs := j.givenDirs(); len(dirs) > 0 {
		return dirs
	}
	var candidates []string
	if local != "" {
		candidates = append(candidates, filepath.Dir(local))
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
	if d := newestLLVMJITDumpDir(j.getenv); d != "" {
		return []string{d}
	}
	return nil
}

// givenDirs returns the JIT object directories the user gave: the
// -jit_dir flags, Options.JITDirs and -jit_pid's snapshot, else
// $PPROF_JIT_DIR; none if pprof is to look for them.
func (j *jitStage) givenDirs() []string {
	var dirs []string
	for _, v := range *j.dirFlag {
		dirs = append(dirs, splitDirs(*v)...)
	}
	for _, d := range j.extraDirs {
		dirs = append(dirs, splitDirs(d)...)
	}
	if snap := j.snapshot(); snap != "" {
		dirs = append(dirs, snap)
	}
	if len(dirs) == 0 {
		dirs = splitDirs(j.getenv("PPROF_JIT_DIR"))
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

// splitDirs splits a list of directories separated by commas or by the
// path list separator, dropping empty elements and duplicates.
func splitDirs(s string) []string {
	var out []string
	for _, d := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == filepath.ListSeparator }) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// A loadedSet is what jprofile.Load read from a list of directories.
type loadedSet struct {
	set  *jprofile.ObjectSet
	errs []error
}

// load loads the JIT objects of dirs, once per run, without saying
// anything.
func (j *jitStage) load(dirs []string) loadedSet {
	dirs = dedupDirs(dirs)
	if len(dirs) == 0 {
		return loadedSet{}
	}
	ls, _ := j.loads.Get(strings.Join(dirs, "\x00"), func() loadedSet {
		set, errs := jprofile.Load(dirs)
		return loadedSet{set, errs}
	})
	return ls
}

// preload loads the JIT objects of dirs in the background, as the stage
// will once the profile is parsed (see objects): started before the
// profile is decompressed, the reading of the directories, the objects'
// metadata and their section tables overlaps it. Nothing is said about
// the objects until the stage runs.
func (j *jitStage) preload(dirs []string) {
	if len(dirs) == 0 {
		return
	}
	j.warming.Add(1)
	go func() {
		defer j.warming.Done()
		j.load(dirs)
	}()
}

// warmer returns the function to call with the JIT addresses a quick
// scan of a profile about to be parsed found (see jprofile.Hint), when
// the JIT objects are to be symbolized in process: it loads the JIT
// objects of dirs in the background and has the object tool start
// indexing the LLVM dumps that hold one of the addresses, so that their
// indexes are built while the profile is parsed rather than after it.
// Nothing is said about the objects until the stage runs.
func (j *jitStage) warmer(dirs []string) func(addrs []uint64) {
	if len(dirs) == 0 || j.warm == nil || !j.inProcess() {
		return func([]uint64) {}
	}
	return func(addrs []uint64) {
		if len(addrs) == 0 {
			return
		}
		j.warming.Add(1)
		go func() {
			defer j.warming.Done()
			for _, o := range j.load(dirs).set.Holding(addrs) {
				if o.Kind == jprofile.LLVMDump {
					j.warm(o.Path)
				}
			}
		}()
	}
}

// objects loads the JIT objects of dirs, once per run, and says which
// were used and what was wrong with the others.
func (j *jitStage) objects(dirs []string) *jprofile.ObjectSet {
	dirs = dedupDirs(dirs)
	if len(dirs) == 0 {
		return nil
	}
	set, _ := j.sets.Get(strings.Join(dirs, "\x00"), func() *jprofile.ObjectSet {
		ls := j.load(dirs)
		set, errs := ls.set, ls.errs
		for _, err := range errs {
			j.ui.PrintErr("JIT objects: ", err)
		}
		if n := set.Len(); n > 0 {
			names := slices.Clone(dirs)
			j.mu.Lock()
			for i, d := range names {
				if l, ok := j.linked[d]; ok {
					names[i] = l
				}
			}
			j.mu.Unlock()
			j.ui.Print(fmt.Sprintf("JIT objects: using %d from %s", n, strings.Join(names, ", ")))
		}
		return set
	})
	return set
}

// frames returns the function that gives the call frame information of
// the JIT code at a pc, from the JIT objects of dirs (loaded once per
// run, as for the stage, when first asked): an LLVM dump's .eh_frame
// (relocated to load addresses: bias 0), or the one a jitdump's writer
// gave that piece of code (CODE_UNWINDING_INFO), each read once.
// perf.data's --call-graph dwarf stacks are unwound through JIT code with
// it (code without frame pointers, which LLVM omits by default,
// included). Nil for no dirs; the function is for one goroutine.
func (j *jitStage) frames(dirs []string) func(pc uint64) (*cfi.Table, uint64) {
	if len(dirs) == 0 {
		return nil
	}
	type key struct {
		path string
		// A jitdump's .eh_frame: the piece of code it is for (V8), or
		// where it was (LLVM's ORC); 0 for an LLVM dump.
		code, eh uint64
	}
	type frames struct {
		t    *cfi.Table // nil: none to use
		bias uint64
	}
	var set *jprofile.ObjectSet
	tables := map[key]frames{}
	dumpPCs := map[uint64]frames{} // jitdump code, by pc: the file is read once per pc at most
	return func(pc uint64) (*cfi.Table, uint64) {
		if set == nil {
			set = j.load(dirs).set
		}
		if fr, ok := dumpPCs[pc]; ok {
			return fr.t, fr.bias
		}
		o, _ := set.Lookup(pc)
		if o == nil {
			return nil, 0
		}
		// Tables that cannot be read leave the code to its frame
		// pointers; the stage says what is wrong with the object, if
		// anything.
		switch o.Kind {
		case jprofile.LLVMDump:
			k := key{o.Path, 0, 0}
			fr, ok := tables[k]
			if !ok {
				if ef, err := elfrel.Open(o.Path); err == nil {
					if cf, _ := cfi.OpenELF(ef); cf != nil {
						fr.t = cf.Table
					}
					ef.Close()
				}
				tables[k] = fr
			}
			return fr.t, fr.bias
		case jprofile.JITDump:
			var fr frames
			if eh, err := o.EHFrame(pc); err == nil && eh != nil {
				k := key{o.Path, eh.Code, eh.Addr}
				if eh.Addr != 0 {
					k.code = 0 // one table for all the code it covers
				}
				var ok bool
				if fr, ok = tables[k]; !ok {
					if arch := cfi.ArchOf(eh.Machine); arch != nil {
						fr.t, fr.bias, _ = cfi.ForCode(o.Path, arch, eh.ByteOrder, eh.Data, eh.Addr, eh.Code)
					}
					tables[k] = fr
				}
			}
			dumpPCs[pc] = fr
			return fr.t, fr.bias
		}
		return nil, 0
	}
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

// checkFlags refuses explicit JIT flag values that cannot be honoured:
// an unknown -jit_symbolizer, a -jit_dir that is not a directory, a
// -jit_pid that names no process. It runs once, right after parsing,
// before any profile is fetched. ($PPROF_JIT_DIR is a default, not a
// request: its missing directories stay warnings.)
func (j *jitStage) checkFlags() error {
	switch *j.symFlag {
	case jitSymInProcess, jitSymBinutils:
	default:
		return fmt.Errorf("-jit_symbolizer=%q: unknown value, want %s or %s", *j.symFlag, jitSymInProcess, jitSymBinutils)
	}
	for _, v := range *j.dirFlag {
		for _, d := range splitDirs(*v) {
			fi, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("-jit_dir=%q: %w", d, err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("-jit_dir=%q: not a directory", d)
			}
		}
	}
	switch pid := *j.pidFlag; {
	case pid < 0:
		return fmt.Errorf("-jit_pid=%d: not a process id", pid)
	case pid > 0:
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return fmt.Errorf("-jit_pid=%d: no such process (nothing at /proc/%d)", pid, pid)
		}
	}
	return nil
}

// inProcess reports whether JIT objects are to be symbolized here, in
// process: -jit_symbolizer=inprocess, and a -symbolize mode that asks for
// local symbolization without forcing it. When pprof is forced to
// re-symbolize (force, or a demangle= mode, which implies force), it
// would redo the JIT mappings with binutils anyway; when it is told not
// to symbolize locally (none, remote), neither does jitpprof.
func (j *jitStage) inProcess() bool {
	if *j.symFlag == jitSymBinutils {
		return false // checkFlags refused any value but these two
	}
	m := parseSymbolize(j.flags.stringFlag(flagSymbolize))
	return m.local && !m.force
}

// symbolize symbolizes the JIT mappings of p in process. Objects the
// in-process reader cannot handle are left to pprof's own symbolizer.
// When it takes a while and standard error is a terminal, a progress
// line is printed every second.
func (j *jitStage) symbolize(p *profile.Profile, jms []jprofile.JITMapping) {
	var progress symbolizer.Progress
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if j.stderrTTY {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(j.progressAt)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					objs, ofObjs, addrs, ofAddrs := progress.Done()
					j.ui.Print(fmt.Sprintf("Symbolizing JIT objects: %d/%d objects, %d/%d addresses", objs, ofObjs, addrs, ofAddrs))
				}
			}
		}()
	}
	// In process means local symbolization with the default demangler
	// (see inProcess): pprof's symbolizer would demangle the names so,
	// after this stage, one at a time.
	errs := j.syms.Symbolize(p, jms, &progress, upstreamDemangle)
	close(stop)
	wg.Wait()
	for _, err := range errs {
		if j.tool != nil {
			// pprof's symbolizer asks the same object tool, which
			// cannot read the object either.
			j.warnOnce(fmt.Sprintf("JIT objects: %v; its addresses stay unsymbolized", err))
		} else {
			j.warnOnce(fmt.Sprintf("JIT objects: %v; leaving it to pprof's symbolizer (binutils)", err))
		}
	}
}

// snapshot takes the -jit_pid snapshot, once per run, into a temporary
// directory removed when the run ends, and returns that directory, or ""
// without -jit_pid or if the snapshot failed (which it reports).
func (j *jitStage) snapshot() string {
	pid := *j.pidFlag
	if pid == 0 {
		return ""
	}
	j.snapOnce.Do(func() {
		dir, err := os.MkdirTemp("", fmt.Sprintf("pprof-jit-%d-", pid))
		if err != nil {
			j.ui.PrintErr("-jit_pid: ", err)
			return
		}
		// The process's perf map, if its runtime writes one (V8, the JVM,
		// .NET, ...), then its LLVM JIT objects through the GDB JIT
		// interface; either is enough.
		// A jitdump names the same code as the perf map, with lines: with
		// one, the perf map is not needed (and would only overlap it).
		var perfMap string
		var mapErr error
		if dump := copyJITDump(pid, dir); dump != "" {
			j.ui.Print(fmt.Sprintf("-jit_pid: jitdump of process %d copied from %s", pid, dump))
			perfMap = dump // enough on its own
		} else if perfMap, mapErr = copyPerfMap(pid, dir); perfMap != "" {
			defer j.ui.Print(fmt.Sprintf("-jit_pid: perf map of process %d copied from %s", pid, perfMap))
		}
		res, err := jitsnap.Snapshot(pid, dir)
		switch {
		case err != nil && perfMap == "":
			os.RemoveAll(dir)
			j.ui.PrintErr("-jit_pid: ", err)
			if mapErr != nil {
				j.ui.PrintErr("-jit_pid: no perf map either: ", mapErr)
			}
			return
		case err == nil:
			for _, skipped := range res.Skipped {
				j.ui.PrintErr("-jit_pid: ", skipped)
			}
			j.ui.Print(fmt.Sprintf("-jit_pid: %d JIT objects copied from process %d", len(res.Written)+len(res.Unchanged), pid))
		}
		j.snapDir = dir
	})
	return j.snapDir
}

// nsPID returns the pid of process pid in its own pid namespace.
func nsPID(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return pid
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
					return n
				}
			}
		}
	}
	return pid
}

// copyJITDump copies the jitdump of process pid into dir, if it wrote
// one where the runtimes do: V8 in its current directory, LLVM under
// $JITDUMPDIR/.debug/jit/*/ or $HOME/.debug/jit/*/ (the process's own
// environment, seen through its root). It returns the path it read, or "".
func copyJITDump(pid int, dir string) string {
	name := fmt.Sprintf("jit-%d.dump", nsPID(pid))
	root := fmt.Sprintf("/proc/%d/root", pid)
	candidates := []string{filepath.Join(fmt.Sprintf("/proc/%d/cwd", pid), name)}
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil {
		for _, kv := range strings.Split(string(env), "\x00") {
			for _, key := range []string{"JITDUMPDIR=", "HOME="} {
				if v, ok := strings.CutPrefix(kv, key); ok && filepath.IsAbs(v) {
					found, _ := filepath.Glob(filepath.Join(root, v, ".debug", "jit", "*", name))
					candidates = append(candidates, found...)
				}
			}
		}
	}
	for _, src := range candidates {
		if copyRegular(src, filepath.Join(dir, fmt.Sprintf("jit-%d.dump", pid))) == nil {
			return src
		}
	}
	return ""
}

// copyRegular copies the regular file src to the new file dst.
func copyRegular(src, dst string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

// copyPerfMap copies the perf map of process pid, /tmp/perf-NSPID.map as
// the process sees its /tmp (NSPID being its pid in its own namespace),
// into dir, and returns the path it read, or "" and why not.
func copyPerfMap(pid int, dir string) (string, error) {
	src := fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, nsPID(pid))
	if err := copyRegular(src, filepath.Join(dir, fmt.Sprintf("perf-%d.map", pid))); err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	return src, nil
}

// hintAnonymous says, once, how much of p is anonymous executable code
// left unsymbolized when no JIT source was used, and what to pass: a
// profile without such code prints nothing more than upstream's would.
func (j *jitStage) hintAnonymous(p *profile.Profile, src string) {
	var anon, total int64
	for _, s := range p.Sample {
		n := int64(1)
		total += n
		if len(s.Location) == 0 {
			continue // a sample with no stack (upstream's gobench.heap has some)
		}
		l := s.Location[0]
		if len(l.Line) > 0 || l.Address == 0 {
			continue
		}
		if m := l.Mapping; m != nil && m.File == "" && m.Start != 0 && m.Limit != ^uint64(0) {
			anon += n
		}
	}
	if total == 0 || anon*100 < total { // under 1%: not worth a word
		return
	}
	msg := fmt.Sprintf("%s: %.1f%% of the samples are in anonymous executable memory (JIT-compiled code?) and stay unsymbolized; "+
		"pass -jit_dir with the directory of the JIT's files (NAME.elf, perf-PID.map, jit-PID.dump), or -jit_pid for a live process",
		src, float64(anon)*100/float64(total))
	if st, err := os.Stat(src); err == nil && st.Mode().IsRegular() {
		dir := filepath.Dir(src)
		if entries, err := os.ReadDir(dir); err == nil {
			for _, e := range entries {
				if sub := filepath.Join(dir, e.Name()); e.IsDir() && jprofile.HasObjects(sub) {
					msg += fmt.Sprintf(" (%s holds JIT files: -jit_dir=%s)", sub, sub)
					break
				}
			}
		}
	}
	j.warnOnce(msg)
}
