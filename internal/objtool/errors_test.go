package objtool

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenErrorsWrap: Open's errors keep upstream's wording (a missing
// file is upstream's bare stat error) and wrap the cause, so a caller
// can tell a missing file from a short one with errors.Is.
func TestOpenErrorsWrap(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("\x7fE"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := New(Options{})
	defer tool.Close()
	for _, tc := range []struct {
		name, prefix string
		is           error
	}{
		{filepath.Join(dir, "missing"), "stat ", fs.ErrNotExist},
		{short, "error reading magic number from ", io.ErrUnexpectedEOF},
	} {
		_, err := tool.Open(tc.name, 0x400000, 0x500000, 0, "")
		if err == nil {
			t.Errorf("Open(%s) succeeded", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.prefix+tc.name) || !errors.Is(err, tc.is) {
			t.Errorf("Open(%s) = %q; want it to start %q and wrap %v", tc.name, err, tc.prefix+tc.name, tc.is)
		}
	}
}
