package jitenv

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// All the switches, as Enable adds them to an environment without any.
const (
	nodeAll = "--perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack"
	jvmAll  = "-XX:+IgnoreUnrecognizedVMOptions -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"
)

// fakeOTP makes an Erlang/OTP installation of release rel under dir, as
// Debian lays it out (ROOTDIR/bin/erl, ROOTDIR/releases/N), with a bin
// directory holding a link to its erl as /usr/bin/erl is, and returns
// that directory.
func fakeOTP(t *testing.T, dir, rel string) string {
	t.Helper()
	root := filepath.Join(dir, "lib", "erlang")
	for _, d := range []string{filepath.Join(root, "bin"), filepath.Join(root, "releases", rel), filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	erl := filepath.Join(root, "bin", "erl")
	if err := os.WriteFile(erl, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/erlang/bin/erl", filepath.Join(dir, "bin", "erl")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "bin")
}

func TestEnable(t *testing.T) {
	tmp := t.TempDir()
	otp25 := fakeOTP(t, filepath.Join(tmp, "otp25"), "25")
	otp23 := fakeOTP(t, filepath.Join(tmp, "otp23"), "23")
	noErl := filepath.Join(tmp, "empty")
	os.Mkdir(noErl, 0o755)
	erlang := "+JPperf true"
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		erlang = "" // no JIT
	}

	tests := []struct {
		name string
		argv []string
		env  []string
		// want are the variables Enable must set, with their values; ""
		// for one it must leave unset. Others must be as in env.
		want map[string]string
		// kept: the Kept of these runtimes must contain the text.
		kept map[string]string
	}{
		{
			name: "nothing set",
			argv: []string{"./run.sh"},
			env:  []string{"PATH=" + otp25, "HOME=/home/u"},
			want: map[string]string{
				"NODE_OPTIONS": nodeAll, "JAVA_TOOL_OPTIONS": jvmAll, "DOTNET_PerfMapEnabled": "1",
				"MONO_ENV_OPTIONS": "--jitmap", "PYTHONPERFSUPPORT": "1", "ERL_AFLAGS": erlang,
				"HOME": "/home/u",
			},
		},
		{
			name: "the user's options come after ours",
			argv: []string{"make", "test"},
			env: []string{"PATH=" + otp25, "NODE_OPTIONS=--max-old-space-size=100 --require ./x.js", "JAVA_TOOL_OPTIONS=-Xmx1g",
				"MONO_ENV_OPTIONS=--debug", "ERL_AFLAGS=+S 2"},
			want: map[string]string{
				"NODE_OPTIONS":      nodeAll + " --max-old-space-size=100 --require ./x.js",
				"JAVA_TOOL_OPTIONS": jvmAll + " -Xmx1g",
				"MONO_ENV_OPTIONS":  "--jitmap --debug",
				"ERL_AFLAGS":        strings.TrimSpace(erlang + " +S 2"),
			},
		},
		{
			name: "node: the user refused the jitdump",
			argv: []string{"node", "app.js"},
			env:  []string{"NODE_OPTIONS=--no-perf-prof"},
			want: map[string]string{"NODE_OPTIONS": "--interpreted-frames-native-stack --no-perf-prof"},
		},
		{
			name: "node: V8's other spellings",
			argv: []string{"node", "app.js"},
			env:  []string{"NODE_OPTIONS=--noperf_prof --no_interpreted_frames_native_stack"},
			want: map[string]string{"NODE_OPTIONS": "--noperf_prof --no_interpreted_frames_native_stack"},
			kept: map[string]string{"Node.js": "you set --noperf_prof; you set --no_interpreted_frames_native_stack"},
		},
		{
			name: "node: the user chose the perf map",
			argv: []string{"sh", "-c", "node app.js"},
			env:  []string{"NODE_OPTIONS=--perf-basic-prof"},
			want: map[string]string{"NODE_OPTIONS": "--interpreted-frames-native-stack --perf-basic-prof"},
		},
		{
			name: "node: the perf map on node's command line",
			argv: []string{"/usr/bin/node", "--perf-basic-prof", "app.js"},
			want: map[string]string{"NODE_OPTIONS": "--interpreted-frames-native-stack"},
		},
		{
			name: "node: the script's own arguments are not node's",
			argv: []string{"node", "app.js", "--perf-basic-prof", "--no-perf-prof"},
			want: map[string]string{"NODE_OPTIONS": nodeAll},
		},
		{
			name: "node: everything set by the user",
			argv: []string{"node", "--perf-prof", "--interpreted-frames-native-stack", "app.js"},
			want: map[string]string{"NODE_OPTIONS": ""},
			kept: map[string]string{"Node.js": "you set --perf-prof; you set --interpreted-frames-native-stack"},
		},
		{
			name: "node: an option that starts with no",
			argv: []string{"node", "app.js"},
			env:  []string{"NODE_OPTIONS=--node-memory-debug"},
			want: map[string]string{"NODE_OPTIONS": nodeAll + " --node-memory-debug"},
		},
		{
			name: "jvm: the user refused the perf map, frame pointers still added",
			argv: []string{"java", "App"},
			env:  []string{"JAVA_TOOL_OPTIONS=-XX:-DumpPerfMapAtExit"},
			want: map[string]string{"JAVA_TOOL_OPTIONS": "-XX:+IgnoreUnrecognizedVMOptions -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer -XX:-DumpPerfMapAtExit"},
		},
		{
			name: "jvm: both refused in _JAVA_OPTIONS",
			argv: []string{"mvn", "test"},
			env:  []string{"_JAVA_OPTIONS=-XX:-PreserveFramePointer -XX:-DumpPerfMapAtExit"},
			want: map[string]string{"JAVA_TOOL_OPTIONS": ""},
			kept: map[string]string{"JVM": "you set -XX:-DumpPerfMapAtExit; you set -XX:-PreserveFramePointer"},
		},
		{
			name: "jvm: an option on java's command line",
			argv: []string{"java", "-XX:+PreserveFramePointer", "-jar", "app.jar", "-XX:-DumpPerfMapAtExit"},
			want: map[string]string{"JAVA_TOOL_OPTIONS": "-XX:+IgnoreUnrecognizedVMOptions -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"},
		},
		{
			name: "jvm: JDK_JAVA_OPTIONS counts",
			argv: []string{"java", "App"},
			env:  []string{"JDK_JAVA_OPTIONS=-XX:+UnlockDiagnosticVMOptions"},
			want: map[string]string{"JAVA_TOOL_OPTIONS": "-XX:+IgnoreUnrecognizedVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"},
		},
		{
			name: ".NET: the user's value, either prefix",
			argv: []string{"dotnet", "app.dll"},
			env:  []string{"COMPlus_PerfMapEnabled=0"},
			want: map[string]string{"DOTNET_PerfMapEnabled": ""},
			kept: map[string]string{".NET": "you set COMPlus_PerfMapEnabled=0"},
		},
		{
			name: ".NET: DOTNET_ set",
			argv: []string{"dotnet", "app.dll"},
			env:  []string{"DOTNET_PerfMapEnabled=3"},
			want: map[string]string{"DOTNET_PerfMapEnabled": "3"},
		},
		{
			name: "mono: --jitmap on mono's command line",
			argv: []string{"mono", "--jitmap", "Work.exe"},
			want: map[string]string{"MONO_ENV_OPTIONS": ""},
		},
		{
			name: "mono: already in MONO_ENV_OPTIONS",
			argv: []string{"mono", "Work.exe"},
			env:  []string{"MONO_ENV_OPTIONS=--gc=sgen --jitmap"},
			want: map[string]string{"MONO_ENV_OPTIONS": "--gc=sgen --jitmap"},
		},
		{
			name: "python: set to 0",
			argv: []string{"python3", "x.py"},
			env:  []string{"PYTHONPERFSUPPORT=0"},
			want: map[string]string{"PYTHONPERFSUPPORT": "0"},
			kept: map[string]string{"CPython": `you set it to "0"`},
		},
		{
			name: "python: set empty",
			argv: []string{"python3", "x.py"},
			env:  []string{"PYTHONPERFSUPPORT="},
			want: map[string]string{"PYTHONPERFSUPPORT": ""},
		},
		{
			name: "erlang: the user's +JPperf in ERL_FLAGS",
			argv: []string{"erl"},
			env:  []string{"PATH=" + otp25, "ERL_FLAGS=+JPperf false"},
			want: map[string]string{"ERL_AFLAGS": "", "ERL_FLAGS": "+JPperf false"},
			kept: map[string]string{"Erlang": "you set +JPperf"},
		},
		{
			name: "erlang: +JPperf on erl's command line",
			argv: []string{"erl", "-noshell", "+JPperf", "map"},
			env:  []string{"PATH=" + otp25},
			want: map[string]string{"ERL_AFLAGS": ""},
		},
		{
			name: "erlang: OTP 23 has no JIT",
			argv: []string{"rebar3", "eunit"},
			env:  []string{"PATH=" + otp23},
			want: map[string]string{"ERL_AFLAGS": ""},
		},
		{
			name: "erlang: no erl",
			argv: []string{"./run.sh"},
			env:  []string{"PATH=" + noErl},
			want: map[string]string{"ERL_AFLAGS": ""},
			kept: map[string]string{"Erlang": "no erl on the command's PATH"},
		},
		{
			name: "erlang: erl by its path",
			argv: []string{filepath.Join(otp23, "erl"), "-noshell"},
			env:  []string{"PATH=" + otp25},
			want: map[string]string{"ERL_AFLAGS": ""},
		},
		{
			name: "duplicate variables: the last counts, one is left",
			argv: []string{"node", "app.js"},
			env:  []string{"NODE_OPTIONS=--perf-prof", "NODE_OPTIONS=--trace-gc"},
			want: map[string]string{"NODE_OPTIONS": nodeAll + " --trace-gc"},
		},
		{
			name: "empty argv",
			env:  []string{"PATH=" + otp25},
			want: map[string]string{"NODE_OPTIONS": nodeAll, "JAVA_TOOL_OPTIONS": jvmAll, "ERL_AFLAGS": erlang},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := slices.Clone(tt.env)
			res := Enable(tt.argv, env, t.TempDir())
			if !slices.Equal(env, tt.env) {
				t.Errorf("Enable modified its argument: got %q, want %q", env, tt.env)
			}
			for name, want := range tt.want {
				got, ok := lookup(res.Env, name)
				if want == "" && name != "PYTHONPERFSUPPORT" {
					if _, before := lookup(tt.env, name); ok && !before {
						t.Errorf("%s: got %q, want it unset", name, got)
					}
					continue
				}
				if got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			for _, kv := range res.Env {
				k, _, _ := strings.Cut(kv, "=")
				if n := slices.IndexFunc(res.Env, func(s string) bool { return strings.HasPrefix(s, k+"=") }); res.Env[n] != kv {
					t.Errorf("%s is in the environment twice: %q", k, res.Env)
				}
				if _, known := tt.want[k]; known || isOurs(k) {
					continue
				}
				if before, _ := lookup(tt.env, k); kv != k+"="+before {
					t.Errorf("got %s, want it as it was (%q)", kv, before)
				}
			}
			for rt, want := range tt.kept {
				i := slices.IndexFunc(res.Changes, func(c Change) bool { return c.Runtime == rt })
				if i < 0 || !strings.Contains(res.Changes[i].Kept, want) || res.Changes[i].Added != "" {
					t.Errorf("%s: got change %+v, want Kept to contain %q and nothing added", rt, res.Changes[min(max(i, 0), len(res.Changes)-1)], want)
				}
			}
			if len(res.Changes) != len(runtimes) {
				t.Errorf("got %d changes, want one per runtime (%d)", len(res.Changes), len(runtimes))
			}
			t.Log(res.Summary())
		})
	}
}

// isOurs reports whether Enable may set the variable.
func isOurs(name string) bool {
	switch name {
	case "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "DOTNET_PerfMapEnabled", "MONO_ENV_OPTIONS", "PYTHONPERFSUPPORT", "ERL_AFLAGS":
		return true
	}
	return false
}

func TestSummary(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the summary below is x86-64's (Erlang's JIT)")
	}
	tmp := t.TempDir()
	res := Enable([]string{"./run.sh"}, []string{"PATH=" + fakeOTP(t, tmp, "25"), "PYTHONPERFSUPPORT=0", "JAVA_TOOL_OPTIONS=-Xmx1g"}, tmp)
	want := "JIT output switched on: NODE_OPTIONS=" + nodeAll + ", JAVA_TOOL_OPTIONS+=" + jvmAll +
		", DOTNET_PerfMapEnabled=1, MONO_ENV_OPTIONS=--jitmap, ERL_AFLAGS=+JPperf true; not added: PYTHONPERFSUPPORT (you set it to \"0\")"
	if got := res.Summary(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	none := Result{Changes: []Change{{Runtime: "Node.js", Var: "NODE_OPTIONS", Kept: "you set --perf-prof"}}}
	if got, want := none.Summary(), "JIT output: nothing added; not added: NODE_OPTIONS (you set --perf-prof)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestV8FlagName(t *testing.T) {
	for _, tt := range []struct{ tok, want string }{
		{"--perf-prof", "perf-prof"},
		{"--perf_prof", "perf-prof"},
		{"--no-perf-prof", "perf-prof"},
		{"--noperf-prof", "perf-prof"},
		{"--noperf_basic_prof", "perf-basic-prof"},
		{"--node-memory-debug", "node-memory-debug"},
		{"--nothing", "nothing"},
		{"--max-old-space-size=100", "max-old-space-size"},
		{"-r", ""},
		{"./x.js", ""},
	} {
		if got := v8FlagName(tt.tok); got != tt.want {
			t.Errorf("v8FlagName(%q): got %q, want %q", tt.tok, got, tt.want)
		}
	}
}

func TestXXFlagName(t *testing.T) {
	for _, tt := range []struct{ tok, want string }{
		{"-XX:+DumpPerfMapAtExit", "DumpPerfMapAtExit"},
		{"-XX:-PreserveFramePointer", "PreserveFramePointer"},
		{"-XX:MaxRAM=1g", "MaxRAM"},
		{"-Xmx1g", ""},
		{"-Dx=-XX:+A", ""},
	} {
		if got := xxFlagName(tt.tok); got != tt.want {
			t.Errorf("xxFlagName(%q): got %q, want %q", tt.tok, got, tt.want)
		}
	}
}
