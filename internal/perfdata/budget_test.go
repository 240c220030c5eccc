package perfdata

import (
	"errors"
	"strings"
	"testing"
)

// countingBudget grants limit bytes in all.
type countingBudget struct{ limit, spent uint64 }

func (b *countingBudget) Take(n uint64) error {
	if n > b.limit-b.spent {
		return errors.New("past the test's limit (-x raises it)")
	}
	b.spent += n
	return nil
}

// TestBudgetBoundsDecompression: the records of perf record -z are
// decompressed only as far as the run's budget allows, each stream
// counted once though it is read twice (the side records, then the
// samples); past it the rest is not read, the samples before kept, and a
// note says which budget stopped it.
func TestBudgetBoundsDecompression(t *testing.T) {
	plain := goldenRecording(t)
	z := compressRecording(t, plain, 1, 4096, 1000, RecordCompressed2)
	f, err := open(t, z)
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := dataSection(plain)
	const step = 4096

	b := &countingBudget{limit: 1 << 40}
	f, _ = open(t, z)
	f.SetBudget(b)
	f.budgetStep = step
	if p, _, err := f.Profile(Options{}); err != nil || totalCount(p) != totalCount(whole) {
		t.Fatalf("with room: %v", err)
	}
	if want := uint64(len(data)+step-1) / step * step; b.spent > want {
		t.Errorf("took %d bytes for %d bytes of records read twice, want at most %d", b.spent, len(data), want)
	}

	f, _ = open(t, z)
	f.SetBudget(&countingBudget{limit: 16 * step})
	f.budgetStep = step
	p, conv, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := totalCount(p); n == 0 || n >= totalCount(whole) {
		t.Errorf("%d samples past the budget, want some of the %d", n, totalCount(whole))
	}
	if len(conv.Notes) != 1 || !strings.HasPrefix(conv.Notes[0], "x.data: in the records compressed (perf record -z), at byte ") ||
		!strings.Contains(conv.Notes[0], "past the test's limit (-x raises it)") {
		t.Errorf("notes %q", conv.Notes)
	}
}
