package driver

import (
	"fmt"
	"sync"
)

// A runBudget is a number of bytes the readers of one run may take in
// all (the records of perf.data recordings decompressed, for
// -max_perf_mb), before they take them: taken, never given back. A
// refusal names the limit and the flag that raises it. Its limit is read
// from the flag when first used, once the flags are parsed.
//
// It has the method of perfdata.Budget, and of the run-wide budget of the
// object readers (-max_debug_mb): one type can serve both.
type runBudget struct {
	flag string // the flag of the limit, in MiB
	mb   *int   // its value
	def  int    // the limit when the flag is unset or not positive
	what string // what the bytes are, for errors

	mu    sync.Mutex
	spent int64
}

// Take takes n bytes, or, if that would pass the limit, nothing: it
// returns an error saying so.
func (b *runBudget) Take(n uint64) error {
	limit := int64(b.def) << 20
	if b.mb != nil && *b.mb > 0 {
		limit = int64(*b.mb) << 20
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > uint64(limit-b.spent) {
		return fmt.Errorf("the run's %s would pass %d MiB, the limit -%s sets (raise it to read more)", b.what, limit>>20, b.flag)
	}
	b.spent += int64(n)
	return nil
}

// defaultMaxPerfMB is -max_perf_mb's default: real recordings of perf
// record -z decompress to about 10 times their size (184 times with
// --call-graph dwarf).
const defaultMaxPerfMB = 4096
