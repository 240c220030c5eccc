// Package testenv gives tests access to the real tools and files they
// need (LLVM, gperftools, Graphviz, Chromium, upstream pprof's module),
// and decides what happens when one is missing: the test is skipped with
// a message saying what to install, unless the environment variable CI is
// "true", in which case it fails. Nothing is ever skipped silently in CI.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// InCI reports whether tests run under CI (CI=true), where a missing
// component fails the test instead of skipping it.
func InCI() bool { return os.Getenv("CI") == "true" }

// Long skips t under -short, unless under CI (where nothing is
// skipped): a test that runs external tools on many inputs, or builds
// programs, which ./test.sh runs; what says what it does.
func Long(t testing.TB, what string) {
	t.Helper()
	if testing.Short() && !InCI() {
		t.Skip("-short: " + what)
	}
}

// Missing skips t, or fails it under CI, because what is missing; how
// says how to get it.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is missing (CI=true forbids skipping): %s", what, how)
	}
	t.Skipf("%s is missing: %s (./test.sh installs it)", what, how)
}

// Tool returns the path of the named executable, or skips (fails under
// CI) if it is not on PATH. pkg names the Debian package providing it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, "apt-get install "+pkg)
	}
	return path
}

// File returns path, or skips (fails under CI) if there is no such file.
// pkg names the Debian package that installs it.
func File(t testing.TB, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, path, "apt-get install "+pkg)
	}
	return path
}

// Run runs the command args in dir, failing t with the command's output
// if it fails.
func Run(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
}

// WriteFile writes data to the file path, making its directories, or
// fails t.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// UpstreamDir returns the directory of the github.com/google/pprof module
// this module depends on, in the module cache. Tests read upstream's real
// profiles from there instead of copying them.
func UpstreamDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		Missing(t, "the github.com/google/pprof module source", "go mod download github.com/google/pprof")
	}
	return dir
}

// RepoRoot returns the root directory of this repository.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the repository root (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// UpstreamPProf returns the path of upstream's pprof command at the
// version go.mod requires, building it on first use into a directory of
// os.TempDir named after that version, where later test runs find it.
func UpstreamPProf(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/google/pprof").Output()
	version := strings.TrimSpace(string(out))
	if err != nil || version == "" {
		Missing(t, "the github.com/google/pprof module", "go mod download github.com/google/pprof")
	}
	path := filepath.Join(os.TempDir(), "jitpprof-upstream-pprof-"+version)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if out, err := exec.Command("go", "build", "-o", tmp, "github.com/google/pprof").CombinedOutput(); err != nil {
		t.Fatalf("building upstream pprof %s: %v\n%s", version, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// GoBuild builds the Go program src (a main package in one file) into
// dir/name with the go command gocmd's build and args, with env added to
// the environment, and returns its path. Each build of src is made in
// the same directory, so their file names are the same. The module says
// Go 1.18, the first with generics, so that older releases build it too.
func GoBuild(t testing.TB, dir, gocmd, src, name string, env []string, args ...string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "gomod-"+strings.TrimSuffix(filepath.Base(src), ".go.txt"))
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string]string{"go.mod": "module hello\n\ngo 1.18\n", "main.go": string(data)} {
		if err := os.WriteFile(filepath.Join(mod, file), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command(gocmd, append(append([]string{"build", "-o", out}, args...), ".")...)
	cmd.Dir, cmd.Env = mod, append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return out
}
