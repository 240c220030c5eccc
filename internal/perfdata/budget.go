package perfdata

// A Budget is the bytes the readers of one run may take in all, before
// they take them: here, what the records of perf record -z decompress
// to. The driver's run-wide budgets have this method.
type Budget interface {
	// Take takes n bytes from the budget, or returns an error saying
	// the limit they would pass and how to raise it.
	Take(n uint64) error
}

// budgetStep is how much of the budget decompression takes at a time.
const budgetStep = 1 << 20

// SetBudget has the records of perf record -z decompressed only as far as
// b allows (nil: no limit but the one on expansion): past it, the rest of
// the stream is not read, as if damaged there, with an error that says
// why. Each stream is counted once, however many times its records are
// read.
func (f *File) SetBudget(b Budget) { f.budget, f.budgetStep = b, budgetStep }

// allow takes from the budget what the stream name needs to reach pos
// bytes decompressed, beyond what it took before.
func (f *File) allow(name string, pos int64) error {
	if f.budget == nil || name == f.granted.name && pos <= f.granted.pos {
		return nil
	}
	if f.decoded == nil {
		f.decoded = map[string]int64{}
	}
	for f.decoded[name] < pos {
		if err := f.budget.Take(uint64(f.budgetStep)); err != nil {
			return err
		}
		f.decoded[name] += f.budgetStep
	}
	f.granted.name, f.granted.pos = name, f.decoded[name]
	return nil
}
