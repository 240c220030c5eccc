package jitsnap

import (
	"errors"
	"fmt"
	"os"
)

// A Result describes one snapshot: where the JIT interface was found and
// what became of each object in its list.
type Result struct {
	PID int
	Dir string // the directory written to
	// Descriptors are the GDB JIT interfaces found in the process,
	// usually one.
	Descriptors []Descriptor
	// Written are the objects that were not in Dir before (or whose
	// files differed) and now are. Their Data is nil.
	Written []Object
	// Unchanged are the objects that Dir already held, byte for byte,
	// from an earlier snapshot or the dump listener. Their Data is nil.
	Unchanged []Object
	// Skipped are the list entries that were not saved, with the
	// reason; their symfiles were unreadable or not valid objects, or
	// changed while they were copied.
	Skipped []*ObjectError
}

// Snapshot copies every JIT object that process pid registered with the
// GDB JIT interface into dir (created if missing), as NAME.elf and
// NAME.meta, with the default Options. See Options.Snapshot.
func Snapshot(pid int, dir string) (*Result, error) {
	return Options{}.Snapshot(pid, dir)
}

// save writes the objects collected from the process into dir and
// completes res.
func save(res *Result, objs []Object) error {
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		return &Error{PID: res.PID, Kind: ErrWrite, Msg: "creating the output directory", Err: err}
	}
	done := map[string]bool{}
	for _, obj := range objs {
		if done[obj.Name] { // the same image registered twice
			continue
		}
		done[obj.Name] = true
		written, err := WriteObject(res.Dir, obj)
		var re *ReadError
		switch {
		case errors.As(err, &re):
			ce := classifyReadError("reading symfile", obj.Addr, err)
			if ce.Kind != ErrCorrupt {
				ce.PID = res.PID
				return ce
			}
			fallthrough // unmapped since it was checked: freed by the JIT
		case errors.Is(err, errChanged):
			res.Skipped = append(res.Skipped, &ObjectError{Entry: obj.Entry, Symfile: obj.Addr, Size: obj.Size, Err: err})
			continue
		case err != nil:
			return &Error{PID: res.PID, Kind: ErrWrite, Addr: obj.Addr,
				Msg: fmt.Sprintf("saving the object at %#x as %s", obj.Addr, obj.Name), Err: err}
		}
		obj.Data = nil
		if written {
			res.Written = append(res.Written, obj)
		} else {
			res.Unchanged = append(res.Unchanged, obj)
		}
	}
	return nil
}
