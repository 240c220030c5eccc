package profile

import "sync"

// The replay of a recording with sample times (perf.data): code that a
// runtime moved (a jitdump's CODE_MOVE), or whose memory it reused for
// other code (a CODE_LOAD over earlier code), ran at addresses that hold
// something else in the final state, the only state the JIT stage knows.
// The set's objects that know their code over time (jitdumps) name the
// code each sample hit by its time, read by the same objects, and named
// the same way, as the stage's; for the code there at the end they leave
// the answer to the stage and its ranking of JIT sources.

// replay is an ObjectSet's index of timelines, made on first use.
type replay struct {
	once  sync.Once
	byPID map[uint32]timeline // by the process the code is of; the later file of a pid reused

	mu  sync.Mutex
	ids map[any]uint64 // a key for each piece of code named
}

func (s *ObjectSet) timelines() *replay {
	r := &s.replay
	r.once.Do(func() {
		r.byPID = map[uint32]timeline{}
		r.ids = map[any]uint64{}
		for _, o := range s.objects() {
			if tl := o.dataOf().timeline(); tl != nil {
				r.byPID[tl.pid()] = tl
			}
		}
	})
	return r
}

// Replaced reports whether any object of s has code that was moved or
// loaded over other code during the run: only then do the times of a
// recording's samples matter.
func (s *ObjectSet) Replaced() bool {
	if s == nil {
		return false
	}
	for _, tl := range s.timelines().byPID {
		if tl.replaced() {
			return true
		}
	}
	return false
}

// CodeAt returns the frame of the code that held addr in process pid at
// time t (the clock of the JIT's records: CLOCK_MONOTONIC nanoseconds),
// if that code is not the code there at the end, and a key, not 0,
// telling that code apart from other code at the same address. ok is
// false for the code there at the end, which the stage names from
// whichever object it ranks first, and when no object knows.
func (s *ObjectSet) CodeAt(pid uint32, addr, t uint64) (f Frame, key uint64, ok bool) {
	if s == nil {
		return Frame{}, 0, false
	}
	r := s.timelines()
	tl := r.byPID[pid]
	if tl == nil {
		return Frame{}, 0, false
	}
	f, code, ok := tl.codeAt(addr, t)
	if !ok {
		return Frame{}, 0, false
	}
	r.mu.Lock()
	key = r.ids[code]
	if key == 0 {
		key = uint64(len(r.ids) + 1)
		r.ids[code] = key
	}
	r.mu.Unlock()
	return f, key, true
}
