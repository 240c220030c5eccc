package objtool

import (
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/debuginfod"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestDebuginfodSameAsLLVMSymbolizer serves the debug file of a g++ -O2
// -g program (64- and 32-bit) with elfutils' debuginfod and symbolizes the program
// without its DWARF (its debug sections removed; and stripped whole)
// as llvm-symbolizer 19 does with DEBUGINFOD_URLS set: every frame,
// inline frames included, equals its, which the test checks it got from
// the server. The file lands in the client cache, from which a second
// Tool symbolizes the program with the server gone; a program the server
// does not have gets its symbols alone, and nothing is said.
func TestDebuginfodSameAsLLVMSymbolizer(t *testing.T) {
	testenv.Long(t, "runs a debuginfod server and compares with llvm-symbolizer")
	gxx := testenv.Tool(t, "g++", "g++")
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	strip := testenv.Tool(t, "strip", "binutils")
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/inline.cc")
	if err != nil {
		t.Fatal(err)
	}
	srv := filepath.Join(dir, "served")
	if err := os.Mkdir(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, dir, gxx, "-O2", "-g", "-o", "prog", src)
	testenv.Run(t, dir, gxx, "-O2", "-g", "-o", "other", src, "-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567")
	testenv.Run(t, dir, objcopy, "--only-keep-debug", "prog", filepath.Join(srv, "prog.debug"))
	testenv.Run(t, dir, "cp", "prog", "prog.orig")
	testenv.Run(t, dir, objcopy, "--wildcard", "--remove-section=.debug_*", "prog")
	testenv.Run(t, dir, strip, "-o", "prog.stripped", "prog")
	testenv.Run(t, dir, objcopy, "--wildcard", "--remove-section=.debug_*", "other")
	// A 32-bit one, read with the standard library (foreign.go).
	testenv.Run(t, dir, gxx, "-m32", "-O2", "-g", "-o", "prog32", src)
	testenv.Run(t, dir, objcopy, "--only-keep-debug", "prog32", filepath.Join(srv, "prog32.debug"))
	testenv.Run(t, dir, "cp", "prog32", "prog32.orig")
	testenv.Run(t, dir, objcopy, "--wildcard", "--remove-section=.debug_*", "prog32")
	buildID := func(name string) []byte {
		f, err := elf.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id, err := elfrel.StdBuildID(f)
		if err != nil || len(id) == 0 {
			t.Fatalf("%s: no build ID: %v", name, err)
		}
		return id
	}
	id := buildID("prog")
	url := testenv.Debuginfod(t, srv, id, buildID("prog32"))
	t.Setenv("HOME", dir)
	t.Setenv("DEBUGINFOD_URLS", url)
	t.Setenv("DEBUGINFOD_CACHE_PATH", filepath.Join(dir, "llvm-cache"))

	cache := filepath.Join(dir, "cache")
	newTool := func(said *[]string, urls ...string) *Tool {
		return New(Options{
			DebugDirs:  []string{filepath.Join(dir, "no-debug-dir")},
			Debuginfod: debuginfod.New(debuginfod.Options{URLs: urls, CacheDir: cache}),
			Warn:       func(msg string) { *said = append(*said, msg) },
		})
	}
	var said []string
	tool := newTool(&said, url)
	defer tool.Close()
	for _, name := range []string{"prog", "prog.stripped", "prog32"} {
		path := filepath.Join(dir, name)
		addrs := sampleForeign(t, filepath.Join(dir, strings.TrimSuffix(name, ".stripped")+".orig"), 3000)
		want := testenv.LLVMSymbolizeWith(t, oracleLLVM, path, addrs)
		if inline := compareFrames(t, tool, path, addrs, want); inline == 0 {
			t.Fatalf("%s: no inline frame: llvm-symbolizer did not get the debug file from debuginfod", name)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, hex.EncodeToString(id), "debuginfo")); err != nil {
		t.Errorf("not in the client cache: %v", err)
	}

	// The server gone (no URL answers), the cache serves.
	var said2 []string
	offline := newTool(&said2, "http://127.0.0.1:1")
	defer offline.Close()
	path := filepath.Join(dir, "prog")
	addrs := sampleCode(t, path, 1000)
	compareFrames(t, offline, path, addrs, testenv.LLVMSymbolizeWith(t, oracleLLVM, path, addrs))

	// A build ID the server does not have: symbols alone, as from
	// llvm-symbolizer, and nothing said.
	other := filepath.Join(dir, "other")
	addrs = sampleCode(t, other, 1000)
	if inline := compareFrames(t, tool, other, addrs, testenv.LLVMSymbolizeWith(t, oracleLLVM, other, addrs)); inline != 0 {
		t.Errorf("%d inline frames for a program without debug information", inline)
	}
	if len(said) > 0 || len(said2) > 0 {
		t.Errorf("said %q and %q, want nothing", said, said2)
	}
}
