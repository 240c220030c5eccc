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
