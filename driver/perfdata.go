package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/mapfile"
	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// Bounds on the directory of a recording of perf record --threads: one
// file per CPU (or per core, package or NUMA node, by its --threads
// option), and Linux counts at most 8192 CPUs.
const (
	maxThreadFiles = 8192
	maxThreadBytes = 64 << 30
)

// A threadFile is one per-thread file of a perf record --threads
// directory, as it was when listed.
type threadFile struct {
	name string
	size int64
}

// threadDataFiles returns the per-thread files of the perf record
// --threads directory dir, data.0, data.1, ..., in their order, each
// regular file once however many names it has (the header file, data,
// included), at most maxThreadFiles of them and maxThreadBytes in all;
// what it left out, it says in notes. Only the directory is read, and
// each file opened and closed in turn.
func threadDataFiles(dir string) (files []threadFile, notes []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	type numbered struct {
		n    int
		name string
	}
	var all []numbered
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "data.")
		if n, err := strconv.Atoi(rest); ok && err == nil && n >= 0 {
			all = append(all, numbered{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(all, func(a, b numbered) int { return a.n - b.n })
	if len(all) > maxThreadFiles {
		notes = append(notes, fmt.Sprintf("%s: %d per-thread files (data.N), more than the %d perf record --threads writes at most (one a CPU): the first %d are read",
			safename.String(dir), len(all), maxThreadFiles, maxThreadFiles))
		all = all[:maxThreadFiles]
	}
	seen := map[regfile.ID]string{}
	if id, err := fileID(filepath.Join(dir, "data")); err == nil {
		seen[id] = filepath.Join(dir, "data")
	}
	var total int64
	var dups []string
	for _, f := range all {
		fd, err := regfile.Open(f.name)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v: not read", safename.String(f.name), err))
			continue
		}
		id, idErr := regfile.IDOf(fd)
		st, stErr := fd.Stat()
		fd.Close()
		if err := errors.Join(idErr, stErr); err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v: not read", safename.String(f.name), err))
			continue
		}
		if first, ok := seen[id]; ok {
			dups = append(dups, fmt.Sprintf("%s (%s)", filepath.Base(f.name), filepath.Base(first)))
			continue
		}
		seen[id] = f.name
		if total+st.Size() > maxThreadBytes {
			notes = append(notes, fmt.Sprintf("%s: its per-thread files hold more than %d GiB: those from %s on are not read",
				safename.String(dir), maxThreadBytes>>30, filepath.Base(f.name)))
			break
		}
		total += st.Size()
		files = append(files, threadFile{name: f.name, size: st.Size()})
	}
	if len(dups) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d per-thread files are another's links, read once: %s",
			safename.String(dir), len(dups), safename.String(listed(dups))))
	}
	return files, notes, nil
}

// fileID returns the ID of the regular file path.
func fileID(path string) (regfile.ID, error) {
	fd, err := regfile.Open(path)
	if err != nil {
		return regfile.ID{}, err
	}
	defer fd.Close()
	return regfile.IDOf(fd)
}

// A filePool keeps at most one of the per-thread files of a recording
// open: perfdata reads them one after the other, so that a directory of
// thousands of them needs one descriptor, not thousands.
type filePool struct {
	mu   sync.Mutex
	name string
	f    *os.File
	err  error
}

// readerAt returns a reader of the file name, opened when first read
// from (closing the one open before).
func (p *filePool) readerAt(name string) pooledFile { return pooledFile{p, name} }

func (p *filePool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil {
		p.f.Close()
	}
	p.f, p.name, p.err = nil, "", nil
}

// A pooledFile is one file of a filePool.
type pooledFile struct {
	p    *filePool
	name string
}

func (pf pooledFile) ReadAt(b []byte, off int64) (int, error) {
	p := pf.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name != pf.name {
		if p.f != nil {
			p.f.Close()
		}
		p.name = pf.name
		p.f, p.err = regfile.Open(pf.name)
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.f.ReadAt(b, off)
}

// perfError returns err, from reading the recording at path, without
// the name of path, which upstream pprof puts before every error of a
// source: a perf.data error names the file it is about once.
func perfError(path string, err error) error {
	var fe *perfdata.FormatError
	if errors.As(err, &fe) && fe.File == path {
		return errors.New(strings.TrimPrefix(err.Error(), path+": "))
	}
	return err
}

// readPerfData reads a perf.data recording in process (package
// perfdata; upstream runs perf_to_profile, which Linux distributions do
// not package) and runs the JIT stage on it, with the jitdump files the
// recorded processes mapped and their perf maps, if they are still here.
func (f *fetcher) readPerfData(path string) (*profile.Profile, error) {
	p, err := f.convertPerfData(path)
	return p, perfError(path, err)
}

func (f *fetcher) convertPerfData(path string) (*profile.Profile, error) {
	header := path
	var threads []threadFile // perf record --threads: a directory
	j := f.run.jit
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		header = filepath.Join(path, "data")
		var notes []string
		if threads, notes, err = threadDataFiles(path); err != nil {
			return nil, err
		}
		for _, n := range notes {
			j.warnOnce(n)
		}
	}
	fd, err := regfile.Open(header)
	if err != nil {
		if header != path {
			return nil, fmt.Errorf("%s: %w", safename.String(header), err)
		}
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	// Mapped, the records are read in place (package mapfile); where
	// files cannot be mapped, read.
	var r io.ReaderAt = fd
	if m, err := mapfile.Map(fd, st.Size()); err == nil {
		defer m.Close()
		r = m
	}
	pf, err := perfdata.Open(r, st.Size(), f.run.displayName(header))
	if err != nil {
		return nil, err
	}
	pf.SetBudget(f.run.perfBudget)
	var pool filePool
	defer pool.close()
	for _, t := range threads {
		pf.AddThreadData(pool.readerAt(t.name), t.size, t.name)
	}
	release := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		release = strings.TrimSpace(string(b))
	}
	// The recording's processes, their mappings and the JIT files they
	// wrote; the JIT objects of those that ran JIT code, which the
	// conversion unwinds stacks through and replays moved code with, are
	// read into the run's cache, from which the JIT stage then names the
	// code.
	rec, err := pf.Scan("/proc")
	if err != nil {
		return nil, err
	}
	recorded := path == f.run.recordPath // this run's -record
	if recorded {
		f.run.tidyRecording(path, rec.JITDumps, nil)
	}
	var jit perfdata.JITCode
	if rec.AnonymousCode() {
		dirs, files := j.find.perfSources(rec.JITDumps, rec.PIDs, path)
		if set := j.load(dirs, files); set != nil {
			jit = set
		}
	}
	// perf's build-ID cache, where perf record leaves a copy of each
	// file it sampled: --call-graph dwarf unwinds through them.
	buildIDDir := f.buildIDDir()
	p, conv, err := rec.Profile(perfdata.Options{Kallsyms: "/proc/kallsyms", KernelRelease: release,
		BuildIDDir: buildIDDir, JIT: jit, Warm: warmer{f.run}})
	if err != nil {
		return nil, err
	}
	for _, n := range conv.Notes {
		j.warnOnce(n)
	}
	f.run.useBuildIDCache(p, path, buildIDDir)
	if recorded {
		f.run.tidyRecording(path, nil, conv.JITFiles) // the perf maps, kept with it
	}
	jitDirs, jitFiles := j.find.perfSources(conv.JITFiles, conv.PIDs, path)
	j.extendPerf(p, f.run.displayName(path), jitDirs, jitFiles)
	return p, nil
}

// warmer has the object tool start on each file a recording's samples
// are in, while the rest are read (see run.warm).
type warmer struct{ r *run }

func (w warmer) Warm(file string) { w.r.warm(file) }
