package membudget

import (
	"errors"
	"sync"
	"testing"
)

func TestTake(t *testing.T) {
	b := New(10<<20, "compressed debug sections decompressed", "-max_debug_mb")
	for _, tc := range []struct {
		n       uint64
		wantErr string
	}{
		{n: 4 << 20},
		{n: 6 << 20},
		{n: 1, wantErr: "1 bytes, after 10485760 before, would take the compressed debug sections decompressed past 10 MiB, the limit for the run (-max_debug_mb raises it)"},
	} {
		err := b.Take(tc.n)
		if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
			t.Errorf("Take(%d) = %v, want %q", tc.n, err, tc.wantErr)
		}
	}
	b.SetLimit(11 << 20)
	var ex *ExceededError
	if err := b.Take(2 << 20); !errors.As(err, &ex) || ex.Spent != 10<<20 || ex.Limit != 11<<20 {
		t.Errorf("Take past the raised limit: %v", err)
	}
	if err := b.Take(1 << 20); err != nil {
		t.Errorf("Take within the raised limit: %v", err)
	}
	if err := New(3, "x", "").Take(1 << 62); err == nil || err.Error() != "4611686018427387904 bytes would take the x past 3 bytes, the limit for the run" {
		t.Errorf("a huge request: %v", err)
	}
	var none *Budget
	if err := none.Take(1 << 62); err != nil {
		t.Errorf("a nil budget refused: %v", err)
	}
}

// TestTakeConcurrent: what concurrent readers are granted never adds up
// to more than the limit.
func TestTakeConcurrent(t *testing.T) {
	b := New(1000, "x", "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if b.Take(3) == nil {
					mu.Lock()
					granted += 3
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if granted != 999 {
		t.Errorf("granted %d bytes, want 999 of a limit of 1000", granted)
	}
}
