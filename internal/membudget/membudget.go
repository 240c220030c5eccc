// Package membudget is a budget of memory that the readers of one run
// draw on before they allocate what a file claims it holds: a compressed
// section's size once decompressed, say, which a few kilobytes of
// Zstandard can put at gigabytes. Each reader asks before it allocates,
// and a refusal names the limit and how to raise it, so that one hostile
// file costs its own contents, never the run.
package membudget

import (
	"fmt"
	"sync"
)

// A Budget is the bytes the readers of one run may take, in all. It is
// safe for concurrent use. A nil *Budget grants everything.
type Budget struct {
	what string // what the bytes are, for errors
	flag string // the flag that raises the limit

	mu    sync.Mutex
	limit int64
	spent int64
}

// New returns a budget of limit bytes of what (such as "compressed debug
// sections decompressed"), which the command-line flag flag (such as
// "-max_debug_mb") raises.
func New(limit int64, what, flag string) *Budget {
	return &Budget{what: what, flag: flag, limit: limit}
}

// SetLimit changes the limit to limit bytes; what was taken stays taken.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	b.limit = limit
	b.mu.Unlock()
}

// Limit returns the limit in bytes.
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Take takes n bytes from the budget, or, if fewer are left, nothing:
// it then returns an *ExceededError.
func (b *Budget) Take(n uint64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > uint64(b.limit-b.spent) || b.spent > b.limit {
		return &ExceededError{Want: n, Spent: b.spent, Limit: b.limit, What: b.what, Flag: b.flag}
	}
	b.spent += int64(n)
	return nil
}

// An ExceededError reports a request the budget could not grant.
type ExceededError struct {
	Want  uint64 // bytes asked for
	Spent int64  // bytes taken before
	Limit int64  // the limit in bytes
	What  string // what the bytes are
	Flag  string // the flag that raises the limit
}

func (e *ExceededError) Error() string {
	s := fmt.Sprintf("%d bytes would take the %s past %s, the limit for the run", e.Want, e.What, mib(e.Limit))
	if e.Spent > 0 {
		s = fmt.Sprintf("%d bytes, after %d before, would take the %s past %s, the limit for the run", e.Want, e.Spent, e.What, mib(e.Limit))
	}
	if e.Flag != "" {
		s += " (" + e.Flag + " raises it)"
	}
	return s
}

// mib prints a limit in MiB when it is a whole number of them.
func mib(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
