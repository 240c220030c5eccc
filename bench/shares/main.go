// Command shares compares the function shares of pprof -top with perf
// report's, for bench/perfdata.sh: the flat shares with perf report
// --no-children's, the cumulative ones with perf report --children -g
// none's, over the functions with 1% or more in either. It prints the
// largest difference of each, in percentage points, as "FLAT CUM", and
// the function it is for to standard error.
//
// Names are compared as perf_test.go compares them: V8's JS:*name
// path:line:col is name, C++ template arguments are dropped (pprof's
// demangling simplifies them away), a pprof frame's (inline) mark too.
// Code no symbol names (pprof's <unknown>, an address to perf report)
// is left out (perf report --children's 0xffffffffffffffff is where it
// could not unwind a stack further), and so are the cumulative shares
// of functions perf tells apart and pprof does not (V8's tiers of a
// function: JS:*main, JS:~main).
//
// Usage:
//
//	shares PPROF_TOP PERF_NO_CHILDREN PERF_CHILDREN
package main

import (
	"bufio"
	"fmt"
	"log"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var (
	pprofRow = regexp.MustCompile(`^\s*\S+\s+([\d.]+)%\s+\S+%\s+\S+\s+([\d.]+)%\s+(.+?)\s*$`)
	perfSelf = regexp.MustCompile(`^\s*([\d.]+)%\s+\[.\]\s+(.+?)\s*$`)
	perfBoth = regexp.MustCompile(`^\s*([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(.+?)\s*$`)
	address  = regexp.MustCompile(`^(0x[0-9a-f]+|[0-9a-f]{16})$`)
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("shares: ")
	if len(os.Args) != 4 {
		log.Fatal("usage: shares PPROF_TOP PERF_NO_CHILDREN PERF_CHILDREN")
	}
	flat, cum := map[string]float64{}, map[string]float64{}
	read(os.Args[1], pprofRow, func(m []string) {
		if m[3] == "<unknown>" {
			return // code no symbol names, an address to perf
		}
		name := normal(strings.TrimSuffix(m[3], " (inline)"))
		flat[name] += number(m[1])
		cum[name] = max(cum[name], number(m[2]))
	})
	perfFlat, perfCum := map[string]float64{}, map[string]float64{}
	read(os.Args[2], perfSelf, func(m []string) {
		if !address.MatchString(m[2]) {
			perfFlat[perfName(m[2])] += number(m[1])
		}
	})
	raw := map[string]map[string]bool{} // perf's names of each name
	read(os.Args[3], perfBoth, func(m []string) {
		if address.MatchString(m[2]) {
			return // code no symbol names, or where perf's unwinding of a cut stack ended
		}
		name := perfName(m[2])
		perfCum[name] = max(perfCum[name], number(m[1]))
		if raw[name] == nil {
			raw[name] = map[string]bool{}
		}
		raw[name][m[2]] = true
	})
	for name, r := range raw {
		if len(r) > 1 {
			// V8's tiers of a function, each a function to perf:
			// the cumulative share of all is not known.
			delete(perfCum, name)
			delete(cum, name)
		}
	}
	df, fn := largest(flat, perfFlat)
	dc, cn := largest(cum, perfCum)
	fmt.Printf("%.2f %.2f\n", df, dc)
	fmt.Fprintf(os.Stderr, "largest differences: flat %.2f (%s), cumulative %.2f (%s)\n", df, fn, dc, cn)
}

// read calls fn with the submatches of re in each line of the file.
func read(file string, re *regexp.Regexp, fn func([]string)) {
	f, err := os.Open(file)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			fn(m)
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
}

func number(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// largest returns the largest difference between a and b over the
// names with 1% or more in either, and its name.
func largest(a, b map[string]float64) (float64, string) {
	d, name := 0.0, ""
	for _, m := range []map[string]float64{a, b} {
		for n, v := range m {
			if v < 1 && a[n] < 1 && b[n] < 1 {
				continue
			}
			if x := math.Abs(a[n] - b[n]); x > d {
				d, name = x, n
			}
		}
	}
	return d, name
}

// perfName is a name of perf report's as pprof gives it: V8's
// Builtin:Name is Builtins_Name, its symbol.
func perfName(name string) string {
	if rest, ok := strings.CutPrefix(name, "JS:"); ok {
		if name, _, _ = strings.Cut(strings.TrimLeft(rest, "*~^+"), " "); name == "" {
			name = "(anonymous)" // a script's top level, as pprof names it
		}
	} else if rest, ok := strings.CutPrefix(name, "Builtin:"); ok {
		name = "Builtins_" + rest
	}
	return normal(name)
}

// normal drops the <...> parts of a C++ name (not of <unknown>), and
// names the glibc functions that have two names for one address by one
// of them (perf and pprof pick either): memmove, whose code is memcpy's,
// as memcpy, and __brk as brk.
func normal(name string) string {
	if rest, ok := strings.CutPrefix(name, "__memmove_"); ok {
		name = "__memcpy_" + rest
	}
	if name == "__brk" {
		name = "brk"
	}
	if strings.HasPrefix(name, "<") {
		return name
	}
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
