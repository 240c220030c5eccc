package objtool

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jitpprof/pprof/internal/debuginfod"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/safename"
)

// debugFile returns the separate debug file of the binary f at path,
// with build ID id, opened, or nil: found locally (findDebugFile), else
// fetched (fetchDebug), if it is an ELF file with that build ID and
// DWARF.
func (t *Tool) debugFile(path string, f *elfrel.File, id []byte) *elfrel.File {
	if d := findDebugFile(path, f, id, t.opts.DebugDirs); d != nil {
		d.SetInflateBudget(t.inflate)
		return d
	}
	p := t.fetchDebug(path, id)
	if p == "" {
		return nil
	}
	d, err := elfrel.Open(p)
	if err == nil {
		var got []byte
		switch got, err = d.BuildID(); {
		case err != nil:
		case !bytes.Equal(got, id):
			err = fmt.Errorf("has build ID %x, not the binary's", got)
		case d.Section(".debug_info") < 0 && d.Section(".zdebug_info") < 0:
			err = errors.New("has no DWARF")
		}
		if err != nil {
			d.Close()
			err = fmt.Errorf("%s %w", safename.String(p), err)
		}
	}
	if err != nil {
		t.sayOnce("debuginfod "+hex.EncodeToString(id), fmt.Sprintf("%s: debug file from debuginfod: %v", safename.String(path), err))
		return nil
	}
	d.SetInflateBudget(t.inflate)
	return d
}

// fetchDebug returns the path of the debug file of the binary at path,
// with build ID id, fetched by the Tool's debuginfod client, as
// llvm-symbolizer fetches it when DEBUGINFOD_URLS is set; "" if the Tool
// has no client or no server has the file. What else goes wrong is said
// once per build ID.
func (t *Tool) fetchDebug(path string, id []byte) string {
	if t.opts.Debuginfod == nil || len(id) < 2 {
		return ""
	}
	p, err := t.opts.Debuginfod.Debuginfo(context.Background(), id)
	if err != nil {
		if !errors.Is(err, debuginfod.ErrNotFound) {
			t.sayOnce("debuginfod "+hex.EncodeToString(id), fmt.Sprintf("%s: %v", safename.String(path), err))
		}
		return ""
	}
	return p
}

// sayOnce tells Options.Warn msg the first time it is asked to under key.
func (t *Tool) sayOnce(key, msg string) {
	if t.opts.Warn == nil {
		return
	}
	t.mu.Lock()
	seen := t.said[key]
	t.said[key] = true
	t.mu.Unlock()
	if !seen {
		t.opts.Warn(msg)
	}
}
