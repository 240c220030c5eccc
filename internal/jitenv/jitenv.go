package jitenv

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A Change is what Enable did about one runtime.
type Change struct {
	Runtime string // "Node.js", "JVM", ".NET", "Mono", "CPython", "Erlang"
	Var     string // the environment variable, such as "NODE_OPTIONS"
	// Added is what Enable added to Var: the whole value for a variable
	// the user had not set, else the options put before the user's.
	// Empty when Enable added nothing.
	Added string
	// User is the variable's value before Enable, "" if it was unset.
	User string
	// Kept says why nothing was added, when Added is empty: the user's
	// own setting, or why the switch would do harm here.
	Kept string
}

// A Result is the command's environment with the switches added, and
// what was done about each runtime.
type Result struct {
	Env     []string // the environment to start the command with
	Changes []Change // one per runtime, in the order of the package doc
}

// Summary returns one line saying what Enable added and what it left as
// the user had it, such as
//
//	JIT output switched on: NODE_OPTIONS+=--perf-prof ..., DOTNET_PerfMapEnabled=1, ...; kept: PYTHONPERFSUPPORT (set to 0)
func (r Result) Summary() string {
	var added, kept []string
	for _, c := range r.Changes {
		switch {
		case c.Added != "":
			if c.User != "" {
				added = append(added, c.Var+"+="+c.Added)
			} else {
				added = append(added, c.Var+"="+c.Added)
			}
		case c.Kept != "":
			kept = append(kept, fmt.Sprintf("%s (%s)", c.Var, c.Kept))
		}
	}
	var b strings.Builder
	if len(added) > 0 {
		b.WriteString("JIT output switched on: ")
		b.WriteString(strings.Join(added, ", "))
	} else {
		b.WriteString("JIT output: nothing added")
	}
	if len(kept) > 0 {
		b.WriteString("; not added: ")
		b.WriteString(strings.Join(kept, ", "))
	}
	return b.String()
}

// Enable returns env, the environment the command argv would be started
// with in directory dir ("" for the current one), with the perf switches
// of the runtimes in the package doc added. env is not modified.
//
// argv[0] matters only where the command is a runtime itself (its base
// name is node, java, mono, erl...): its own options are then looked at
// too, so that a switch the user gave there is not added again. PATH in
// env is used to find erl, whose version decides whether ERL_AFLAGS is
// set.
func Enable(argv, env []string, dir string) Result {
	c := &command{env: env, dir: dir}
	if len(argv) > 0 {
		c.name = filepath.Base(argv[0])
		c.args = argv[1:]
		c.path = argv[0]
	}
	res := Result{Env: clone(env)}
	for _, rt := range runtimes {
		ch := rt(c)
		ch.User, _ = lookup(res.Env, ch.Var)
		if ch.Added != "" {
			value := ch.Added
			if ch.User != "" {
				value += " " + ch.User
			}
			res.Env = set(res.Env, ch.Var, value)
		}
		res.Changes = append(res.Changes, ch)
	}
	return res
}

// command is what the runtimes' rules look at.
type command struct {
	name string   // base name of argv[0]
	path string   // argv[0]
	args []string // argv[1:]
	env  []string
	dir  string
}

// getenv returns the value of the last name= in the command's
// environment, as the runtimes' getenv does.
func (c *command) getenv(name string) (string, bool) { return lookup(c.env, name) }

// lookup returns the value of the last name= in env.
func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// set returns env with every name= removed and name=value appended.
func set(env []string, name, value string) []string {
	out := env[:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

func clone(env []string) []string { return append([]string(nil), env...) }
