package objtool

import (
	"runtime"
	"sync/atomic"
)

// collectAfter is how many SourceLine answers since the last collection
// have a file's Close collect the garbage (see Tool.answered).
const collectAfter = 1 << 16

// answered counts the SourceLine answers of the files a Tool opened
// since the last collection, and collects the garbage when one of them
// is closed after many. pprof's symbolizer closes the files it opened
// once it has looked up every address of the profile, and its report
// comes next: the lookups' garbage (frames given and copied into the
// profile, prefetched answers taken, the symbolizer's own copies) is
// then about as large as the symbolized profile, and the collector,
// paced on what was live at its last cycle, lets the report's
// allocations grow the heap over it or reuse it depending on where
// that cycle fell. Collected there, it is reused: at a million native
// addresses the run's peak RSS is steady at about 1,180 MiB (1,171 to
// 1,182 in 4 runs, against 1,134 to 1,361 without), for the same CPU
// time (bench/memscale.sh). A few files closed in a row collect once:
// the count starts again from 0.
type answered struct {
	n     atomic.Int64
	after int64 // answers that have Close collect; collectAfter
}

// add counts one answer.
func (a *answered) add() { a.n.Add(1) }

// closed collects the garbage if after answers or more were given since
// the last collection, and reports whether it did.
func (a *answered) closed() bool {
	if a.n.Load() < a.after || a.n.Swap(0) < a.after {
		return false
	}
	runtime.GC()
	return true
}
