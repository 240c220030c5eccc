package oncemap

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestGetComputesOncePerKey(t *testing.T) {
	var m Map[string, int]
	var calls atomic.Int32
	var computed atomic.Int32
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"a", "b"}[i%2]
			v, first := m.Get(key, func() int { calls.Add(1); return len(key) * 10 })
			if v != 10 {
				t.Errorf("Get(%q) = %d, want 10", key, v)
			}
			if first {
				computed.Add(1)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 2 || computed.Load() != 2 {
		t.Errorf("compute ran %d times, %d callers saw computed; want 2 and 2 (one per key)", calls.Load(), computed.Load())
	}
	if got := m.Drain(); len(got) != 2 {
		t.Errorf("Drain returned %v, want the 2 values", got)
	}
	if _, first := m.Get("a", func() int { return 1 }); !first {
		t.Error("after Drain, Get did not compute again")
	}
}
