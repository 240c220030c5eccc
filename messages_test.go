package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// messageSinks are the functions and methods through which jitpprof
// tells the user something on standard error: the driver's warnOnce and
// the UI's PrintErr, the perf.data converter's and the jitdump reader's
// notes, the object tool's Warn and sayOnce, the recorder's Log and say.
var messageSinks = map[string]bool{
	"warnOnce": true, "PrintErr": true, "note": true, "warn": true,
	"Warn": true, "sayOnce": true, "say": true, "Log": true,
}

// formatVerb matches a fmt verb: what a message's text has in place of
// what it names.
var formatVerb = regexp.MustCompile(`%[-+# 0-9.\[\]]*[a-zA-Z]`)

// minFragment is the shortest fixed text of a message the test looks
// for: shorter ones ("-record: ") say nothing by themselves.
const minFragment = 12

// TestEveryMessageInGuide checks that doc/guide.md's messages section
// quotes every message jitpprof prints on standard error: for each call
// of a message sink in the module's code with a literal text (or a
// format), the longest stretch of fixed text in it must be in the guide,
// where it is explained with what to do about it.
func TestEveryMessageInGuide(t *testing.T) {
	root := testenv.RepoRoot(t)
	guide, err := os.ReadFile(filepath.Join(root, "doc", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(guide)), " ")
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "build" || name == "testdata" || name == "bench" || name == "e2e" || name == "testenv" || name == "browsertest" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !messageSinks[calleeName(call)] {
				return true
			}
			fragment := longestFixedText(call.Args)
			if len(fragment) < minFragment {
				return true
			}
			found++
			if !strings.Contains(text, fragment) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: doc/guide.md does not explain the message with %q", rel, fset.Position(call.Pos()).Line, fragment)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 40 {
		t.Errorf("%d messages found in the code, want at least 40: are the sinks still these?", found)
	}
}

// calleeName is the name of the function or method call calls.
func calleeName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		return fn.Sel.Name
	case *ast.Ident:
		return fn.Name
	}
	return ""
}

// longestFixedText returns the longest stretch of fixed text in a
// message made of args: string literals, concatenated, or the format of
// fmt.Sprintf or fmt.Errorf, between its verbs; spaces folded.
func longestFixedText(args []ast.Expr) string {
	best := ""
	for _, a := range args {
		for _, lit := range literals(a) {
			for _, frag := range formatVerb.Split(lit, -1) {
				if frag = strings.Join(strings.Fields(frag), " "); len(frag) > len(best) {
					best = frag
				}
			}
		}
	}
	return best
}

// literals returns the string literals of e: itself, the parts of a
// concatenation, or a Sprintf's or Errorf's format.
func literals(e ast.Expr) []string {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			if err == nil {
				return []string{s}
			}
		}
	case *ast.BinaryExpr:
		return append(literals(x.X), literals(x.Y)...)
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Sprintf" || sel.Sel.Name == "Errorf") && len(x.Args) > 0 {
			return literals(x.Args[0])
		}
	}
	return nil
}
