package profile

import (
	"fmt"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/safename"
)

// A JITMapping is the mapping Extend made for one JIT object, with the
// locations attached to it.
type JITMapping struct {
	Object  *Object
	Mapping *profile.Mapping
	// Locations are the locations attached to Mapping, in profile order.
	Locations []*profile.Location
}

// A Result says what Extend did.
type Result struct {
	// JIT lists one mapping per JIT object that holds at least one
	// location, sorted by object path.
	JIT []JITMapping
	// Rebuilt reports whether the mappings were rebuilt from a legacy
	// memory map.
	Rebuilt bool
	// Conflicts counts locations whose address lies in a JIT section
	// but also in a file mapping of the profile. The profile's mapping
	// wins: the JIT objects were most likely dumped by another run.
	Conflicts int
}

// Extend runs the extended-mapping stage on p, a profile just parsed
// from data in the legacy or proto format.
//
// If memoryMap is not nil (as Parse returns it), p's mappings are
// replaced by mappings rebuilt from it (see legacyMappings for the rules
// and how they differ from upstream pprof's), and every location is
// assigned again. Otherwise p's mappings are kept.
//
// Then every location with an address in a section of objs and no
// symbol information yet is attached to the mapping of that section's
// object: one mapping per object, with Start 0, Limit ^uint64(0),
// Offset 0 and File the object's absolute path (its characters that are
// not printable escaped), so that pprof computes a
// base of 0 and hands the symbolizer absolute addresses. A location that
// the profile already assigns to a file mapping (other than such a JIT
// mapping) stays there and is counted in Result.Conflicts.
//
// JIT mappings are appended after the other mappings, so they never
// become the first mapping, which pprof takes for the main binary. If p
// had no mapping at all, Extend first adds the empty placeholder mapping
// pprof would add and gives it every location it does not attach.
//
// Extend does nothing but the rebuild when objs is empty. It returns an
// error only if memoryMap cannot be parsed, and then leaves p unchanged.
func Extend(p *profile.Profile, memoryMap []byte, objs *ObjectSet) (*Result, error) {
	res := &Result{}
	var ordinary *mappingIndex
	if memoryMap != nil {
		ms, err := legacyMappings(memoryMap)
		if err != nil {
			return nil, fmt.Errorf("parsing the memory map: %w", err)
		}
		p.Mapping = ms
		ordinary = newMappingIndex(ms)
		res.Rebuilt = true
	}

	byObject := map[*Object]*JITMapping{}
	var fake *profile.Mapping
	hadMappings := len(p.Mapping) > 0
	for _, l := range p.Location {
		if ordinary != nil {
			l.Mapping = ordinary.find(l.Address)
		}
		if obj := jitObject(l, objs); obj != nil {
			if ownedByFile(l.Mapping) {
				// Perf maps list code inside files too (V8's builtins
				// in node's own text): there, the file is expected to win.
				if obj.source().exact() {
					res.Conflicts++
				}
			} else {
				jm := byObject[obj]
				if jm == nil {
					// The path may come from a recording (a jitdump it
					// names): reports print it as it is.
					jm = &JITMapping{Object: obj, Mapping: &profile.Mapping{Limit: ^uint64(0), File: safename.Escape(obj.Path)}}
					byObject[obj] = jm
				}
				l.Mapping = jm.Mapping
				jm.Locations = append(jm.Locations, l)
				continue
			}
		}
		if ordinary != nil && l.Mapping == nil && l.Address != 0 {
			// Like upstream, an address no mapping holds gets a
			// catch-all mapping, shared by all such addresses.
			if fake == nil {
				fake = &profile.Mapping{Limit: ^uint64(0)}
				p.Mapping = append(p.Mapping, fake)
			}
			l.Mapping = fake
		}
	}

	if len(byObject) > 0 && !hadMappings {
		// pprof adds this placeholder, and gives it every location, when
		// a profile has no mapping; it must come before the JIT ones.
		placeholder := &profile.Mapping{}
		p.Mapping = append([]*profile.Mapping{placeholder}, p.Mapping...)
		for _, l := range p.Location {
			if l.Mapping == nil {
				l.Mapping = placeholder
			}
		}
	}
	for _, o := range objs.objects() {
		if jm := byObject[o]; jm != nil {
			p.Mapping = append(p.Mapping, jm.Mapping)
			res.JIT = append(res.JIT, *jm)
		}
	}
	for i, m := range p.Mapping {
		m.ID = uint64(i + 1)
	}
	return res, nil
}

// jitObject returns the JIT object holding l's address, if l is a
// candidate for attachment: it has an address and no symbol information.
func jitObject(l *profile.Location, objs *ObjectSet) *Object {
	if l.Address == 0 || len(l.Line) > 0 || objs.Len() == 0 {
		return nil
	}
	obj, _ := objs.Lookup(l.Address)
	return obj
}

// MayHoldJIT reports whether p has a location the stage could give to
// JIT code: an address in no mapping of a file the profile vouches for
// (anonymous memory, no mapping, or a catch-all mapping; see
// ownedByFile). A profile without one has no use for JIT files, such as
// another run's perf map or jitdump beside a recording of native code.
func MayHoldJIT(p *profile.Profile) bool {
	for _, l := range p.Location {
		if l.Address != 0 && len(l.Line) == 0 && !ownedByFile(l.Mapping) {
			return true
		}
	}
	return false
}

// ownedByFile reports whether m is a mapping of a named file over a real
// address range: one the profile's own memory map vouches for. Anonymous
// memory, whatever its name ([perfmap.Anonymous]: "/dev/zero (deleted)",
// "[anon:NAME]", ...), and the catch-all mappings [0, ^0) and [0, 0),
// with or without a name (JIT mappings made by an earlier run of this
// stage look like that), are not.
func ownedByFile(m *profile.Mapping) bool {
	if m == nil || perfmap.Anonymous(m.File) {
		return false
	}
	return !(m.Start == 0 && (m.Limit == 0 || m.Limit == ^uint64(0)))
}

// objects returns the objects of s, or nil for a nil set.
func (s *ObjectSet) objects() []*Object {
	if s == nil {
		return nil
	}
	return s.Objects
}
