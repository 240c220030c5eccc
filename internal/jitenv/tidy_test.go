package jitenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTidy(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	old := start.Add(-time.Hour)
	type file struct {
		name  string
		mtime time.Time // zero: now
	}
	tests := []struct {
		name     string
		cwd      []file // in the working directory
		dest     []file // already in the destination
		jitdumps []string
		// The files left in the working directory, moved into dest, and
		// reported as left behind.
		wantCwd, wantMoved []string
		wantLeft           int
	}{
		{
			name:      "a Node.js run",
			cwd:       []file{{name: "app.js", mtime: old}, {name: "jit-42.dump"}, {name: "isolate-0x2a0b3c40-42-v8.log"}},
			jitdumps:  []string{"jit-42.dump"},
			wantCwd:   []string{"app.js"},
			wantMoved: []string{"jit-42.dump"},
		},
		{
			name: "other processes' and older files stay",
			cwd: []file{{name: "jit-42.dump"}, {name: "isolate-0x2a0b3c40-42-v8.log"}, {name: "isolate-0x2a0b3c40-420-v8.log"},
				{name: "isolate-0xzz-42-v8.log"}, {name: "isolate-0x1-42-v8.log", mtime: old}, {name: "jit-7.dump", mtime: old}, {name: "jit-8.dump"}},
			jitdumps:  []string{"jit-42.dump", "jit-7.dump"},
			wantCwd:   []string{"isolate-0x1-42-v8.log", "isolate-0x2a0b3c40-420-v8.log", "isolate-0xzz-42-v8.log", "jit-7.dump", "jit-8.dump"},
			wantMoved: []string{"jit-42.dump"},
		},
		{
			name:     "a name taken in the destination",
			cwd:      []file{{name: "jit-42.dump"}, {name: "isolate-0x10-42-v8.log"}},
			dest:     []file{{name: "jit-42.dump", mtime: old}},
			jitdumps: []string{"jit-42.dump"},
			wantCwd:  []string{"jit-42.dump"},
			wantLeft: 1,
		},
		{
			name:     "not jitdumps, or in /tmp",
			cwd:      []file{{name: "perf-42.map"}, {name: "jit-42.dump.bak"}},
			jitdumps: []string{"perf-42.map", "jit-42.dump.bak", "/tmp/jit-1.dump", "gone/jit-3.dump"},
			wantCwd:  []string{"jit-42.dump.bak", "perf-42.map"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd, dest := t.TempDir(), t.TempDir()
			create := func(dir string, files []file) {
				for _, f := range files {
					p := filepath.Join(dir, f.name)
					if err := os.WriteFile(p, []byte(f.name), 0o644); err != nil {
						t.Fatal(err)
					}
					if !f.mtime.IsZero() {
						os.Chtimes(p, f.mtime, f.mtime)
					}
				}
			}
			create(cwd, tt.cwd)
			create(dest, tt.dest)
			var paths []string
			for _, j := range tt.jitdumps {
				if !filepath.IsAbs(j) {
					j = filepath.Join(cwd, j)
				}
				paths = append(paths, j)
			}
			res, err := Tidy(dest, paths, start)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(t, cwd); !slices.Equal(got, tt.wantCwd) {
				t.Errorf("the working directory holds %q, want %q", got, tt.wantCwd)
			}
			var moved []string
			for _, m := range res.Moved {
				moved = append(moved, filepath.Base(m))
				if b, _ := os.ReadFile(m); string(b) != filepath.Base(m) {
					t.Errorf("%s holds %q, want the moved file's contents", m, b)
				}
			}
			if !slices.Equal(moved, tt.wantMoved) {
				t.Errorf("moved %q, want %q", moved, tt.wantMoved)
			}
			if len(res.Left) != tt.wantLeft {
				t.Errorf("left %v, want %d", res.Left, tt.wantLeft)
			}
			for _, r := range res.Removed {
				if !strings.HasPrefix(filepath.Base(r), "isolate-0x") {
					t.Errorf("removed %s", r)
				}
			}
		})
	}
}

// TestTidyAcrossFileSystems moves a jitdump to another file system
// (/dev/shm, a tmpfs), where rename(2) fails with EXDEV.
func TestTidyAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "jitenv-")
	if err != nil {
		t.Skipf("no /dev/shm to move to: %v", err)
	}
	defer os.RemoveAll(shm)
	cwd := t.TempDir()
	src := filepath.Join(cwd, "jit-9.dump")
	data := []byte(strings.Repeat("JiTD", 100000))
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Tidy(shm, []string{src}, time.Now().Add(-time.Minute))
	if err != nil || len(res.Moved) != 1 {
		t.Fatalf("Tidy: %+v, %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(shm, "jit-9.dump")); err != nil || string(b) != string(data) {
		t.Errorf("the moved file: %d bytes, %v; want %d", len(b), err, len(data))
	}
	if _, err := os.Stat(src); err == nil {
		t.Errorf("%s is still there", src)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
