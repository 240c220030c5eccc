package jitenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// A rule decides what to add for one runtime.
type rule func(c *command) Change

// runtimes are the rules, in the order of the package doc.
var runtimes = []rule{node, jvm, dotnet, mono, cpython, erlang}

// nodeFlags are the V8 options added to NODE_OPTIONS. --perf-prof and
// --perf-prof-unwinding-info are one choice (the jitdump and what goes
// into it), skipped together if the user chose any perf output.
var nodeFlags = []string{"--perf-prof", "--perf-prof-unwinding-info", "--interpreted-frames-native-stack"}

// nodePerfOutput are V8's perf outputs: a user who names one of them has
// chosen (or refused) one.
var nodePerfOutput = []string{"perf-prof", "perf-basic-prof", "perf-basic-prof-only-functions", "perf-prof-unwinding-info"}

func node(c *command) Change {
	ch := Change{Runtime: "Node.js", Var: "NODE_OPTIONS"}
	var user []string
	if v, ok := c.getenv("NODE_OPTIONS"); ok {
		user = append(user, strings.Fields(v)...)
	}
	if c.name == "node" || c.name == "nodejs" {
		user = append(user, runtimeOptions(c.args)...)
	}
	mentioned := map[string]string{} // name: the user's option
	for _, tok := range user {
		if name := v8FlagName(tok); name != "" {
			mentioned[name] = tok
		}
	}
	var chosen []string // the user's perf output options
	for _, name := range nodePerfOutput {
		if tok, ok := mentioned[name]; ok {
			chosen = append(chosen, tok)
		}
	}
	var add, kept []string
	if len(chosen) > 0 {
		kept = append(kept, "you set "+strings.Join(chosen, " "))
	}
	for _, f := range nodeFlags {
		name := v8FlagName(f)
		if tok, ok := mentioned[name]; ok {
			if !slices.Contains(nodePerfOutput, name) {
				kept = append(kept, "you set "+tok)
			}
			continue
		}
		if len(chosen) > 0 && slices.Contains(nodePerfOutput, name) {
			continue
		}
		add = append(add, f)
	}
	// V8's --perf-prof and --perf-basic-prof imply --log, whose file
	// goes into the current directory, or, where that cannot be
	// created, to the program's standard output.
	if slices.Contains(add, "--perf-prof") {
		if err := writable(c.dir); err != nil {
			ch.Kept = fmt.Sprintf("the working directory is not writable (%v): V8 would write its log to the program's standard output", err)
			return ch
		}
	}
	ch.Added = strings.Join(add, " ")
	if ch.Added == "" {
		ch.Kept = strings.Join(kept, "; ")
	}
	return ch
}

// v8FlagName returns the name of a V8 or Node.js option as V8 compares
// them: without dashes, a negating "no" or a value, '_' read as '-'. It
// returns "" for a token that is not an option.
func v8FlagName(tok string) string {
	if !strings.HasPrefix(tok, "--") {
		return ""
	}
	name, _, _ := strings.Cut(tok[2:], "=")
	name = strings.ReplaceAll(name, "_", "-")
	if rest, ok := strings.CutPrefix(name, "no-"); ok {
		return rest
	}
	// V8 reads --noperf-prof as --no-perf-prof too.
	if rest, ok := strings.CutPrefix(name, "no"); ok && (slices.Contains(nodePerfOutput, rest) || slices.Contains(nodeFlags, "--"+rest)) {
		return rest
	}
	return name
}

// runtimeOptions returns the options of a runtime's command line: the
// arguments before the first that is not an option (the script, class or
// jar), or before "--".
func runtimeOptions(args []string) []string {
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return args[:i]
		}
	}
	return args
}

// jvmFlags are added to JAVA_TOOL_OPTIONS; IgnoreUnrecognizedVMOptions
// first, so that a JDK that does not know the others still starts.
var jvmFlags = []string{"-XX:+IgnoreUnrecognizedVMOptions", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-XX:+PreserveFramePointer"}

func jvm(c *command) Change {
	ch := Change{Runtime: "JVM", Var: "JAVA_TOOL_OPTIONS"}
	mentioned := map[string]string{}
	note := func(tok string) {
		if name := xxFlagName(tok); name != "" {
			mentioned[name] = tok
		}
	}
	for _, v := range []string{"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"} {
		val, _ := c.getenv(v)
		for _, tok := range strings.Fields(val) {
			note(tok)
		}
	}
	if c.name == "java" {
		for _, tok := range runtimeOptions(c.args) {
			note(tok)
		}
	}
	var add, kept []string
	useful := false // adds the perf map or frame pointers
	for _, f := range jvmFlags {
		name := xxFlagName(f)
		if tok, ok := mentioned[name]; ok {
			kept = append(kept, "you set "+tok)
			continue
		}
		add = append(add, f)
		useful = useful || name == "DumpPerfMapAtExit" || name == "PreserveFramePointer"
	}
	if !useful {
		ch.Kept = strings.Join(kept, "; ")
		return ch
	}
	ch.Added = strings.Join(add, " ")
	return ch
}

// xxFlagName returns the name of a HotSpot -XX option (-XX:+Name,
// -XX:-Name, -XX:Name=value), or "" for any other token.
func xxFlagName(tok string) string {
	name, ok := strings.CutPrefix(tok, "-XX:")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "+-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func dotnet(c *command) Change {
	ch := Change{Runtime: ".NET", Var: "DOTNET_PerfMapEnabled"}
	// COMPlus_ is the variables' older prefix, still read.
	for _, v := range []string{"DOTNET_PerfMapEnabled", "COMPlus_PerfMapEnabled"} {
		if val, ok := c.getenv(v); ok {
			ch.Kept = fmt.Sprintf("you set %s=%s", v, val)
			return ch
		}
	}
	ch.Added = "1"
	return ch
}

func mono(c *command) Change {
	ch := Change{Runtime: "Mono", Var: "MONO_ENV_OPTIONS"}
	opts, _ := c.getenv("MONO_ENV_OPTIONS")
	user := strings.Fields(opts)
	if c.name == "mono" {
		user = append(user, runtimeOptions(c.args)...)
	}
	if slices.Contains(user, "--jitmap") {
		ch.Kept = "you set --jitmap"
		return ch
	}
	ch.Added = "--jitmap"
	return ch
}

func cpython(c *command) Change {
	ch := Change{Runtime: "CPython", Var: "PYTHONPERFSUPPORT"}
	if val, ok := c.getenv("PYTHONPERFSUPPORT"); ok {
		ch.Kept = "you set it to " + strconv.Quote(val)
		return ch
	}
	ch.Added = "1"
	return ch
}

// erlang adds +JPperf true to ERL_AFLAGS where the erl the command
// would find runs a BEAM with the JIT.
func erlang(c *command) Change {
	ch := Change{Runtime: "Erlang", Var: "ERL_AFLAGS"}
	var user []string
	for _, v := range []string{"ERL_AFLAGS", "ERL_FLAGS", "ERL_ZFLAGS"} {
		val, _ := c.getenv(v)
		user = append(user, strings.Fields(val)...)
	}
	if c.name == "erl" {
		user = append(user, c.args...)
	}
	if slices.Contains(user, "+JPperf") {
		ch.Kept = "you set +JPperf"
		return ch
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		ch.Kept = "the BEAM has no JIT on " + runtime.GOARCH
		return ch
	}
	erl := c.path
	if c.name != "erl" || !strings.Contains(erl, "/") {
		erl = lookPath("erl", c.env, c.dir)
	}
	if erl == "" {
		ch.Kept = "no erl on the command's PATH"
		return ch
	}
	otp, err := otpRelease(erl, c.dir)
	switch {
	case err != nil:
		ch.Kept = err.Error()
	case otp < 24:
		ch.Kept = fmt.Sprintf("%s is of OTP %d, older than the BEAM's JIT (OTP 24), whose emulator knows no +J flags", erl, otp)
	default:
		ch.Added = "+JPperf true"
	}
	return ch
}

// otpRelease returns the major release of the Erlang/OTP installation
// whose erl script is erl: the erl of an installation is ROOTDIR/bin/erl
// (Debian links /usr/bin/erl to it), beside ROOTDIR/releases/N/.
func otpRelease(erl, dir string) (int, error) {
	if !filepath.IsAbs(erl) && dir != "" {
		erl = filepath.Join(dir, erl)
	}
	real, err := filepath.EvalSymlinks(erl)
	if err != nil {
		return 0, fmt.Errorf("cannot tell the OTP release of %s: %w", erl, err)
	}
	root := filepath.Dir(filepath.Dir(real))
	entries, err := os.ReadDir(filepath.Join(root, "releases"))
	if err != nil {
		return 0, fmt.Errorf("cannot tell the OTP release of %s: %w", erl, err)
	}
	best := 0
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			best = max(best, n)
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("cannot tell the OTP release of %s: no release under %s", erl, filepath.Join(root, "releases"))
	}
	return best, nil
}

// lookPath finds an executable named file in the directories of the PATH
// in env (relative ones taken from dir), as execvp would; "" if none.
func lookPath(file string, env []string, dir string) string {
	path, _ := lookup(env, "PATH")
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, file)
		abs := p
		if !filepath.IsAbs(abs) && dir != "" {
			abs = filepath.Join(dir, abs)
		}
		if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return abs
		}
	}
	return ""
}
