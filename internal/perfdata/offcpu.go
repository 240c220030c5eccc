package perfdata

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"
)

// This file reads what the kernel says besides samples (lost records,
// context switches) and turns context switches into off-CPU time: a
// recording with PERF_RECORD_SWITCH records (perf record --switch-events,
// pprof -record -offcpu) says when each thread left a CPU and when it
// came back; each such interval becomes a sample of the time the thread
// spent off CPU, blocked or waiting for a CPU, with the stack where it
// left: that of the sched:sched_switch tracepoint's sample taken as it
// left, if the recording has that event (perf record -e
// sched:sched_switch -g, as pprof -record -offcpu records it where
// tracefs allows), else that of its last on-CPU sample. The profile then
// has two more sample types: offcpu, and wall, the on-CPU time of
// the first event (when it counts time: cpu-clock, task-clock) plus the
// off-CPU time, so that -sample_index=wall is a wall-clock view.

// Record types of lost data and of context switches.
const (
	RecordLost          = 2
	RecordLostSamples   = 13
	RecordSwitch        = 14
	RecordSwitchCPUWide = 15
)

// Misc bits of a SWITCH record.
const (
	MiscSwitchOut        = 1 << 13 // the thread left the CPU
	MiscSwitchOutPreempt = 1 << 14 // ... runnable, preempted
)

// sideBand decodes a LOST, LOST_SAMPLES or SWITCH record: the count of
// what was lost, and the thread the record's sample_id trailer names.
func (f *File) sideBand(rec *Record, b []byte) bool {
	bo := f.ByteOrder
	switch rec.Type {
	case RecordLost:
		if len(b) < 16 {
			return false
		}
		rec.Lost = bo.Uint64(b[8:])
	case RecordLostSamples:
		if len(b) < 8 {
			return false
		}
		rec.Lost = bo.Uint64(b)
	}
	rec.PID, rec.TID = f.idThread(b)
	return true
}

// idThread returns the pid and tid in the sample_id trailer of a record
// other than SAMPLE, b (see idTime), or 0, 0.
func (f *File) idThread(b []byte) (pid, tid uint32) {
	if len(f.Attrs) == 0 {
		return 0, 0
	}
	bo := f.ByteOrder
	a := &f.Attrs[0]
	if a.SampleType&SampleIdentifier != 0 && len(b) >= 8 {
		if ea := f.byID[bo.Uint64(b[len(b)-8:])]; ea != nil {
			a = ea
		}
	}
	st := a.SampleType
	if !a.SampleIDAll || st&SampleTID == 0 {
		return 0, 0
	}
	n := 0
	for _, bit := range []uint64{SampleTID, SampleTime, SampleID, SampleStreamID, SampleCPU, SampleIdentifier} {
		if st&bit != 0 {
			n += 8
		}
	}
	if len(b) < n {
		return 0, 0
	}
	t := b[len(b)-n:]
	return bo.Uint32(t), bo.Uint32(t[4:])
}

// A sideBand sums up, in the first pass over the records, what was lost
// and whether threads' context switches were recorded.
type sideBand struct {
	lost, lostSamples uint64
	switches          bool
}

func (s *sideBand) scan(r *Record) {
	switch r.Type {
	case RecordLost:
		s.lost += r.Lost
	case RecordLostSamples:
		s.lostSamples += r.Lost
	case RecordSwitch, RecordSwitchCPUWide:
		s.switches = true
	}
}

// note returns the line that says what was lost, or "".
func (s *sideBand) note() string {
	switch {
	case s.lost > 0 && s.lostSamples > 0:
		return fmt.Sprintf("%d records and %d samples were lost (the kernel's buffers were full): the profile undercounts; record at a lower frequency", s.lost, s.lostSamples)
	case s.lost > 0:
		return fmt.Sprintf("%d records were lost (the kernel's buffers were full): the profile undercounts; record at a lower frequency", s.lost)
	case s.lostSamples > 0:
		return fmt.Sprintf("%d samples were lost: the profile undercounts; record at a lower frequency", s.lostSamples)
	}
	return ""
}

// offCPU turns context switches into off-CPU samples (see the top of
// this file). A nil *offCPU does nothing.
type offCPU struct {
	block     *Attr // the sched:sched_switch event, nil if none
	offIndex  int   // the offcpu value's index in the profile's samples
	wallIndex int   // the wall value's, -1 if none
	onIndex   int   // the on-CPU time's added into wall

	last     map[uint32][]*profile.Location // by tid: the stack of its last sample
	blocked  map[uint32]blockStack          // by tid: its last sched_switch sample
	stacks   map[string][]*profile.Location // interned stacks, by location ids
	switches []switchEvent
	end      uint64 // the last time recorded
	key      []byte
	fromLast int // intervals with the last sample's stack
}

// blockStack is the stack of a sched_switch sample, and its time.
type blockStack struct {
	time  uint64
	stack []*profile.Location
}

// A switchEvent is a thread leaving or reentering a CPU, or exiting.
type switchEvent struct {
	time     uint64
	pid, tid uint32
	kind     uint8 // switchIn, switchOut or switchExit
	stack    []*profile.Location
}

const (
	switchIn = iota
	switchOut
	switchExit
)

// blockSlack is how far before a switch out its sched_switch sample may
// be: both are written on the CPU the thread leaves, a few hundred
// nanoseconds apart.
const blockSlack = 1_000_000

// newOffCPU returns the converter of f's context switches, nil if the
// recording has none or its records have no times.
func newOffCPU(f *File, sb *sideBand) *offCPU {
	if !sb.switches || len(f.Attrs) == 0 || f.Attrs[0].SampleType&SampleTime == 0 || !f.Attrs[0].SampleIDAll {
		return nil
	}
	o := &offCPU{last: map[uint32][]*profile.Location{}, blocked: map[uint32]blockStack{},
		stacks: map[string][]*profile.Location{}, wallIndex: -1}
	for i := range f.Attrs {
		if a := &f.Attrs[i]; a.Name == "sched:sched_switch" && a.SampleType&SampleCallchain != 0 {
			o.block = a
		}
	}
	return o
}

// blocks reports whether a is the event whose samples are where threads
// blocked, which is not an event of the profile of its own.
func (o *offCPU) blocks(a *Attr) bool { return o != nil && a == o.block && a != nil }

// sampleTypes adds offcpu and, if the first event counts nanoseconds,
// wall to the profile's sample types, and has pprof show the first
// event by default.
func (o *offCPU) sampleTypes(p *profile.Profile) {
	if o == nil || len(p.SampleType) < 2 {
		return
	}
	p.DefaultSampleType = p.SampleType[1].Type
	o.onIndex = 1
	o.offIndex = len(p.SampleType)
	p.SampleType = append(p.SampleType, &profile.ValueType{Type: "offcpu", Unit: "nanoseconds"})
	if p.SampleType[1].Unit == "nanoseconds" {
		o.wallIndex = len(p.SampleType)
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "wall", Unit: "nanoseconds"})
	}
}

// side takes a switch or exit record.
func (o *offCPU) side(r *Record) {
	if o == nil || r.Time == 0 {
		return
	}
	o.end = max(o.end, r.Time)
	switch r.Type {
	case RecordSwitch, RecordSwitchCPUWide:
		if r.TID == 0 {
			return // the idle task
		}
		if r.Misc&MiscSwitchOut == 0 {
			o.switches = append(o.switches, switchEvent{time: r.Time, pid: r.PID, tid: r.TID, kind: switchIn})
			return
		}
		// The thread's sched_switch sample, written just before on the
		// same CPU, else its last sample.
		var stack []*profile.Location
		if b, ok := o.blocked[r.TID]; ok && b.time <= r.Time && r.Time-b.time < blockSlack {
			stack = b.stack
		} else if s := o.last[r.TID]; s != nil {
			stack = o.intern(s)
			o.fromLast++
		}
		delete(o.blocked, r.TID)
		o.switches = append(o.switches, switchEvent{time: r.Time, pid: r.PID, tid: r.TID, kind: switchOut, stack: stack})
	case RecordExit:
		o.switches = append(o.switches, switchEvent{time: r.Time, pid: r.PID, tid: r.TID, kind: switchExit})
	}
}

// sample takes a sample and its stack, and reports whether it is one of
// where a thread blocked, which is not a sample of the profile.
func (o *offCPU) sample(r *Record, stack []*profile.Location) bool {
	if o == nil {
		return false
	}
	o.end = max(o.end, r.Time)
	if o.blocks(r.Attr) {
		o.blocked[r.TID] = blockStack{r.Time, o.intern(stack)}
		return true
	}
	o.last[r.TID] = append(o.last[r.TID][:0], stack...)
	return false
}

// intern returns the stack's copy kept for the intervals.
func (o *offCPU) intern(stack []*profile.Location) []*profile.Location {
	o.key = o.key[:0]
	for _, l := range stack {
		o.key = binary.LittleEndian.AppendUint64(o.key, l.ID)
	}
	if s, ok := o.stacks[string(o.key)]; ok {
		return s
	}
	s := slices.Clone(stack)
	o.stacks[string(o.key)] = s
	return s
}

// finish adds the off-CPU samples to p: per thread, each interval from
// a switch out to the next switch in (or to the end of the recording:
// a thread still blocked then), unless the thread exited; samples with
// the same thread, command and stack added up. It adds on-CPU time to
// wall and returns the note that says where the stacks come from.
// comm gives a thread's command at a time.
func (o *offCPU) finish(p *profile.Profile, comm func(pid, tid uint32, t uint64) string) string {
	if o == nil {
		return ""
	}
	if o.wallIndex >= 0 {
		for _, s := range p.Sample {
			s.Value[o.wallIndex] += s.Value[o.onIndex]
		}
	}
	slices.SortStableFunc(o.switches, func(a, b switchEvent) int {
		return cmp.Or(cmp.Compare(a.tid, b.tid), cmp.Compare(a.time, b.time))
	})
	var unknown []*profile.Location // the stack of a thread never sampled
	same := map[string]*profile.Sample{}
	var key []byte
	add := func(out switchEvent, until uint64) {
		if until <= out.time {
			return
		}
		stack := out.stack
		if stack == nil {
			if unknown == nil {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: "[off-CPU: no stack]", SystemName: "[off-CPU: no stack]"}
				p.Function = append(p.Function, fn)
				l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, l)
				unknown = []*profile.Location{l}
			}
			stack = unknown
		}
		c := comm(out.pid, out.tid, out.time)
		key = binary.LittleEndian.AppendUint32(key[:0], out.pid)
		key = binary.LittleEndian.AppendUint32(key, out.tid)
		key = append(append(key, c...), 0)
		for _, l := range stack {
			key = binary.LittleEndian.AppendUint64(key, l.ID)
		}
		d := int64(until - out.time)
		s := same[string(key)]
		if s == nil {
			s = &profile.Sample{Location: stack, Value: make([]int64, len(p.SampleType)),
				NumLabel: map[string][]int64{"pid": {int64(out.pid)}, "tid": {int64(out.tid)}}}
			if c != "" {
				s.Label = map[string][]string{"comm": {c}}
			}
			same[string(key)] = s
			p.Sample = append(p.Sample, s)
		}
		s.Value[o.offIndex] += d
		if o.wallIndex >= 0 {
			s.Value[o.wallIndex] += d
		}
	}
	var pending *switchEvent
	for i := range o.switches {
		e := &o.switches[i]
		if pending != nil && pending.tid != e.tid {
			add(*pending, o.end) // still off CPU at the end
			pending = nil
		}
		switch e.kind {
		case switchOut:
			if pending == nil {
				pending = e
			}
		case switchIn:
			if pending != nil {
				add(*pending, e.time)
				pending = nil
			}
		case switchExit:
			pending = nil
		}
	}
	if pending != nil {
		add(*pending, o.end)
	}
	switch {
	case o.block != nil && o.fromLast == 0:
		return "off-CPU time (-sample_index=offcpu, wall): the stack of each interval is where the thread left the CPU (sched:sched_switch)"
	case o.block != nil:
		return fmt.Sprintf("off-CPU time (-sample_index=offcpu, wall): the stack of each interval is where the thread left the CPU (sched:sched_switch), for %d of them the stack of its last on-CPU sample", o.fromLast)
	}
	return "off-CPU time (-sample_index=offcpu, wall): the stack of each interval is that of the thread's last on-CPU sample (the recording has no sched:sched_switch samples of where threads blocked)"
}
