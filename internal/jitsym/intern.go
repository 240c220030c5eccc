package jitsym

import (
	"hash/maphash"
	"strings"
)

// interner keeps one copy of each distinct string given to it, in
// strings of a few dozen kilobytes each (so that 40,000 names take a
// few dozen allocations), and numbers them in the order first seen. It
// finds a string through an open-addressing table of those numbers,
// which takes a few bytes per string where a map[string]int32 would take
// about forty.
type interner struct {
	strs  *[]string // by number
	slots []int32   // 1 + a number, or 0 for an empty slot; a power of two long
	seed  maphash.Seed
	arena strings.Builder // its free capacity takes the next strings
}

// arenaSize is the capacity of each arena.
const arenaSize = 64 << 10

func newInterner(strs *[]string) *interner {
	t := &interner{strs: strs, seed: maphash.MakeSeed(), slots: make([]int32, 1024)}
	for i, s := range *strs {
		t.insert(maphash.String(t.seed, s), int32(i))
	}
	return t
}

// id returns the number of b, adding a copy of it if it is new.
func (t *interner) id(b []byte) int32 {
	h := maphash.Bytes(t.seed, b)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		k := t.slots[i]
		if k == 0 {
			break
		}
		if s := (*t.strs)[k-1]; s == string(b) {
			return k - 1
		}
	}
	id := int32(len(*t.strs))
	*t.strs = append(*t.strs, t.copy(b))
	if 3*len(*t.strs) > 2*len(t.slots) { // keep the table at most two thirds full
		t.slots = make([]int32, 2*len(t.slots))
		for i, s := range *t.strs {
			t.insert(maphash.String(t.seed, s), int32(i))
		}
	} else {
		t.insert(h, id)
	}
	return id
}

func (t *interner) insert(h uint64, id int32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = id + 1
}

// copy returns a copy of b in the current arena, starting a new one when
// it is full. A string already handed out is never written again: later
// ones go after it, in capacity it does not cover.
func (t *interner) copy(b []byte) string {
	if len(b) > arenaSize/8 {
		return string(b)
	}
	if t.arena.Cap()-t.arena.Len() < len(b) {
		t.arena = strings.Builder{}
		t.arena.Grow(arenaSize)
	}
	n := t.arena.Len()
	t.arena.Write(b)
	return t.arena.String()[n:]
}
