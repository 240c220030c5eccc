package cfi

// An Unwinder unwinds the stacks of threads of one address space, whose
// code its Finder finds. It keeps, for each pc it met, the table found
// there and the table's compiled rule at it (see Table.rule): the same
// return addresses recur from stack to stack, and unwinding a frame at
// one met before costs a map lookup and the loads of its rule. The
// Finder must give the same answer for a pc each time.
//
// An Unwinder is not safe for concurrent use, nor are the Tables it
// unwinds with, which keep the rules compiled.
type Unwinder struct {
	arch *Arch
	find Finder
	// frames are what is known of the code at each pc met: [0] for
	// callers (return addresses, the call before them), [1] for exact
	// pcs (innermost frames, frames a signal interrupted).
	frames [2]map[uint64]frameCode
	// recent are the pcs met last, by a hash of the pc, before frames:
	// a stack's pcs are looked up without hashing them through a map.
	recent [recentSlots]recentCode
	regs   [2]Regs // the callee's and the caller's, in turn
}

// recentSlots is the size of Unwinder.recent, 1<<recentBits slots (12
// KiB): enough for the pcs stacks have in common, small for a system-wide
// recording's thousands of processes, an Unwinder each.
const (
	recentBits  = 8
	recentSlots = 1 << recentBits
)

// A recentCode is a slot of Unwinder.recent: the frameCode of pc, a
// caller's if kind is 1, an exact pc's if 2; none if kind is 0.
type recentCode struct {
	pc   uint64
	kind uint8
	frameCode
}

// A frameCode is what an Unwinder keeps of the code at one pc.
type frameCode struct {
	t    *Table
	bias uint64
	c    *compiled // t's rule at the pc; nil if t is nil
	ok   bool      // the Finder knows the pc
}

// maxFrames bounds the pcs an Unwinder keeps of each kind: the others
// are looked up each time.
const maxFrames = 1 << 20

// NewUnwinder returns an Unwinder of arch's threads, whose code find
// finds.
func NewUnwinder(arch *Arch, find Finder) *Unwinder {
	return &Unwinder{arch: arch, find: find}
}

// Unwind appends to dst the return addresses of the calls in progress,
// innermost first, in a thread whose innermost frame's registers are
// regs and pc is pc, and whose stack's top is stack; it is [Unwind], but
// for the memory read, and does not allocate (but to grow dst) once the
// pcs of the stack have been met.
func (u *Unwinder) Unwind(dst []uint64, regs *Regs, pc uint64, stack Stack, max int, work *int64) ([]uint64, error) {
	m := stackMemory(stack)
	return u.unwind(dst, regs, pc, &m, max, work)
}

// unwind is Unwind for memory m.
func (u *Unwinder) unwind(dst []uint64, regs *Regs, pc uint64, m *memory, max int, work *int64) ([]uint64, error) {
	arch := u.arch
	cur, caller := &u.regs[0], &u.regs[1]
	*cur = *regs
	exact := true
	if arch.PC >= 0 {
		cur.Set(arch.PC, pc)
	}
	for range max {
		// u.code(pc, exact), its first case inlined.
		kind := uint8(1)
		if exact {
			kind = 2
		}
		fc := &u.recent[(pc*0x9e3779b97f4a7c15+uint64(kind))>>(64-recentBits)]
		if fc.pc != pc || fc.kind != kind {
			fc = u.code(pc, exact)
		}
		if !fc.ok {
			return dst, ErrNoEntry
		}
		addr := pc - fc.bias
		if !exact {
			addr--
		}
		sp, haveSP := cur.Get(arch.SP)
		var ret uint64
		var signal, end bool
		var err error
		if c := fc.c; c != nil && c.kind == kindFast && (work == nil || *work > 0) {
			// The common case, apply's for a kindFast rule, in place.
			if work != nil {
				*work -= c.cost
			}
			ret, signal, end, err = fc.t.applyFast(c, addr, cur, m)
		} else {
			err = ErrNoEntry
			if fc.t != nil {
				ret, signal, end, err = fc.t.apply(fc.c, addr, cur, caller, m, work)
				if err == ErrNoEntry && fc.t.goSP != nil {
					ret, err = fc.t.goApply(fc.c, exact, cur, caller, m, work)
				}
			}
			if err == ErrNoEntry { // apply's and goApply's, not wrapped
				ret, err = fpStep(arch, cur, caller, m)
			}
			cur, caller = caller, cur
		}
		if err != nil || end || ret == 0 {
			return dst, err
		}
		csp, ok := cur.Get(arch.SP)
		if !haveSP || !ok || csp < sp || csp-sp < arch.MinCFA {
			return dst, ErrNoProgress
		}
		dst = append(dst, ret)
		pc, exact = ret, signal
	}
	return dst, nil
}

// code returns what is known of the code at pc, a caller's unless
// exact, and puts it in its slot of Unwinder.recent.
func (u *Unwinder) code(pc uint64, exact bool) *recentCode {
	k := 0
	if exact {
		k = 1
	}
	slot := &u.recent[(pc*0x9e3779b97f4a7c15+uint64(k+1))>>(64-recentBits)]
	if fc, ok := u.frames[k][pc]; ok {
		*slot = recentCode{pc, uint8(k + 1), fc}
		return slot
	}
	var fc frameCode
	fc.t, fc.bias, fc.ok = u.find(pc)
	if fc.ok && fc.t != nil {
		addr := pc - fc.bias
		if !exact {
			addr--
		}
		fc.c = fc.t.rule(addr)
	}
	if u.frames[k] == nil {
		u.frames[k] = map[uint64]frameCode{}
	}
	if len(u.frames[k]) < maxFrames {
		u.frames[k][pc] = fc
	}
	*slot = recentCode{pc, uint8(k + 1), fc}
	return slot
}
