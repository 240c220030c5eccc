package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/safename"
	"github.com/jitpprof/pprof/internal/symbolizer"
	jprofile "github.com/jitpprof/pprof/profile"
)

// jitStage runs the extended-mapping stage for every fetched profile and
// symbolizes the JIT objects it attaches, from the run's JIT object
// cache. It is shared by the concurrent Fetch calls of one run.
type jitStage struct {
	ui         UI
	flags      *flagRecorder // for -symbolize
	jf         jitFlags
	find       *jitFinder
	live       *liveSnapshot
	cache      *jprofile.Cache
	progressAt time.Duration // delay before progress is shown
	stderrTTY  bool
	binutils   bool // pprof's symbolizer reads binaries with binutils, not jitpprof's object tool
	// display names a file or directory in messages, and displayText
	// rewrites the paths in a message: a temporary one (-record's, when
	// not kept) by what it is, since the user cannot open it once pprof
	// ends.
	display, displayText func(string) string

	// warming counts the goroutines that load objects ahead of the stage
	// (see preload and warmer).
	warming sync.WaitGroup

	mu       sync.Mutex
	warned   map[string]bool
	reported map[*jprofile.ObjectSet]bool // sets whose objects were reported
}

// newJIT returns the JIT stage of a run whose JIT objects cache holds,
// defining its flags on flags.
func newJIT(flags *flagRecorder, ui UI, extraDirs []string, getenv func(string) string, cache *jprofile.Cache) *jitStage {
	jf := defineJITFlags(flags)
	j := &jitStage{
		ui:          ui,
		flags:       flags,
		jf:          jf,
		live:        &liveSnapshot{pid: jf.pid, anyOwner: jf.anyOwner, ui: ui},
		cache:       cache,
		progressAt:  time.Second,
		stderrTTY:   isTerminal(os.Stderr),
		warned:      map[string]bool{},
		reported:    map[*jprofile.ObjectSet]bool{},
		display:     func(s string) string { return s },
		displayText: func(s string) string { return s },
	}
	j.find = &jitFinder{flags: jf, extraDirs: extraDirs, getenv: getenv, live: j.live, warn: j.warnOnce}
	return j
}

func (j *jitStage) close() {
	j.warming.Wait()
	j.live.close()
}

// checkFlags refuses JIT flag values that cannot be honoured (see
// jitFlags.check), and has the cache read what -jit_any_owner allows.
func (j *jitStage) checkFlags() error {
	j.cache.SetAnyOwner(*j.jf.anyOwner)
	return j.jf.check()
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
	j.extendDirs(p, src, memoryMap, j.find.dirs(local))
}

// extendDirs runs the stage on p, fetched from src, with the JIT objects
// of dirs, unless it has nothing to do (see unneeded).
func (j *jitStage) extendDirs(p *profile.Profile, src string, memoryMap []byte, dirs []string) {
	if j.unneeded(p, memoryMap) {
		return
	}
	j.apply(p, src, memoryMap, dirs, nil)
}

// extendPerf runs the stage on p, converted from the perf.data recording
// at path, with the JIT objects of dirs and of the recording's JIT files
// files (see jitFinder.perfSources).
func (j *jitStage) extendPerf(p *profile.Profile, path string, dirs, files []string) {
	if j.unneeded(p, nil) {
		return
	}
	j.apply(p, path, nil, dirs, files)
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
	return memoryMap == nil && len(j.find.givenDirs()) == 0 && !jprofile.MayHoldJIT(p)
}

// apply runs the stage on p, fetched from src, with the JIT objects of
// dirs and files, once the stage is found needed.
func (j *jitStage) apply(p *profile.Profile, src string, memoryMap []byte, dirs, files []string) {
	set := j.objects(dirs, files, src)
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

// load returns the JIT objects of dirs and files from the run's cache,
// without saying anything; nil for none.
func (j *jitStage) load(dirs, files []string) *jprofile.ObjectSet {
	dirs = dedupDirs(dirs)
	if len(dirs)+len(files) == 0 {
		return nil
	}
	set, _ := j.cache.Load(dirs, files)
	return set
}

// objects returns the JIT objects of dirs and files (those a perf.data
// recording src names), and says, once per set, which were used and
// what was wrong with the others.
func (j *jitStage) objects(dirs, files []string, src string) *jprofile.ObjectSet {
	dirs = dedupDirs(dirs)
	if len(dirs)+len(files) == 0 {
		return nil
	}
	set, errs := j.cache.Load(dirs, files)
	j.mu.Lock()
	done := j.reported[set]
	j.reported[set] = true
	j.mu.Unlock()
	if done {
		return set
	}
	for _, err := range errs {
		j.ui.PrintErr("JIT objects: " + j.displayText(err.Error()))
	}
	if n := set.Len(); n > 0 {
		names := sourcesOf(set, dirs, files, src)
		for i, n := range names {
			names[i] = j.display(n)
		}
		j.ui.Print(fmt.Sprintf("JIT objects: using %d from %s", n, strings.Join(names, ", ")))
	}
	return set
}

// sourcesOf names where the objects of set came from, for messages: the
// directories of dirs that hold one, and the JIT files a perf.data
// recording src names, if any of them is used.
func sourcesOf(set *jprofile.ObjectSet, dirs, files []string, src string) []string {
	var out []string
	inDir := map[string]bool{}
	for _, o := range set.Objects {
		inDir[filepath.Dir(o.Path)] = true
	}
	for _, d := range dirs {
		if inDir[d] {
			out = append(out, d)
		}
	}
	var used []string
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil && slices.ContainsFunc(set.Objects, func(o *jprofile.Object) bool { return o.Path == abs }) {
			used = append(used, safename.String(f))
		}
	}
	if len(used) > 0 {
		out = append(out, fmt.Sprintf("the JIT files %s names (%s)", filepath.Base(src), listed(used)))
	}
	return out
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
		j.load(dirs, nil)
	}()
}

// warmer returns the function to call with the JIT addresses a quick
// scan of a profile about to be parsed found (see jprofile.Hint), when
// the JIT objects are to be symbolized in process: it loads the JIT
// objects of dirs in the background and has the cache open the frames
// of those that hold one of the addresses (an LLVM dump's DWARF
// indexed), so that they are ready when the profile is parsed rather
// than after it. Nothing is said about the objects until the stage runs.
func (j *jitStage) warmer(dirs []string) func(addrs []uint64) {
	if len(dirs) == 0 || !j.inProcess() {
		return func([]uint64) {}
	}
	return func(addrs []uint64) {
		if len(addrs) == 0 {
			return
		}
		j.warming.Add(1)
		go func() {
			defer j.warming.Done()
			j.cache.Warm(j.load(dirs, nil).Holding(addrs))
		}()
	}
}

// inProcess reports whether JIT objects are to be symbolized here, in
// process: -jit_symbolizer=inprocess, and a -symbolize mode that asks for
// local symbolization without forcing it. When pprof is forced to
// re-symbolize (force, or a demangle= mode, which implies force), it
// would redo the JIT mappings with binutils anyway; when it is told not
// to symbolize locally (none, remote), neither does jitpprof.
func (j *jitStage) inProcess() bool {
	if *j.jf.sym == jitSymBinutils {
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
	j.symbolizeMappings(p, symbolizer.Mappings(jms))
}

// symbolizeMappings is symbolize, of the JIT mappings ms.
func (j *jitStage) symbolizeMappings(p *profile.Profile, ms []symbolizer.Mapping) {
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
	errs := symbolizer.Symbolize(p, ms, &progress, upstreamDemangle)
	close(stop)
	wg.Wait()
	for _, err := range errs {
		var w *jprofile.ObjectWarning
		switch {
		case errors.As(err, &w):
			j.warnOnce("JIT objects: " + err.Error())
		case j.binutils:
			j.warnOnce(fmt.Sprintf("JIT objects: %v; leaving it to pprof's symbolizer (binutils)", err))
		default:
			// pprof's symbolizer asks the same object tool, which cannot
			// read the object either.
			j.warnOnce(fmt.Sprintf("JIT objects: %v; its addresses stay unsymbolized", err))
		}
	}
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
		// No name: a legacy profile's anonymous memory; "//anon": a
		// perf.data's (perf's name, which the converter keeps).
		if m := l.Mapping; m != nil && (m.File == "" || m.File == "//anon") && m.Start != 0 && m.Limit != ^uint64(0) {
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
					msg += fmt.Sprintf(" (%s holds JIT files: -jit_dir=%s)", safename.String(sub), safename.String(sub))
					break
				}
			}
		}
	}
	j.warnOnce(msg)
}
