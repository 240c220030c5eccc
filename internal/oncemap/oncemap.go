// Package oncemap computes a value per key at most once, for concurrent
// callers: jitpprof loads each JIT directory list and opens each JIT
// object once per run, whichever of the concurrently fetched profiles
// asks first.
package oncemap

import "sync"

// A Map holds the values computed for its keys. The zero Map is ready to
// use; a Map must not be copied after first use.
type Map[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	once sync.Once
	v    V
}

// Get returns the value for key, calling compute to make it if no earlier
// call did. Concurrent callers for one key wait for the first. Get
// reports whether this call computed the value.
func (m *Map[K, V]) Get(key K, compute func() V) (v V, computed bool) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[K]*entry[V]{}
	}
	e := m.m[key]
	if e == nil {
		e = &entry[V]{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() {
		e.v = compute()
		computed = true
	})
	return e.v, computed
}

// Drain removes every value from m and returns those that were
// computed. Call it when no Get is running.
func (m *Map[K, V]) Drain() []V {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []V
	for _, e := range m.m {
		out = append(out, e.v)
	}
	m.m = nil
	return out
}
