package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// docLink matches what gofmt's doc comment syntax takes for a doc link:
// [Name], [Name.Method], [pkg.Name], [pkg.Name.Method], with an optional
// leading *.
var docLink = regexp.MustCompile(`\[\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,2})\]`)

// TestDocLinksResolve checks every doc link in the doc comments of this
// module's packages: [Name] and [Type.Method] must name something in the
// package, [pkg.Name] something exported by a package the file imports.
// A link that resolves nowhere renders as plain text on pkg.go.dev, and
// usually means a renamed or removed name.
func TestDocLinksResolve(t *testing.T) {
	root := testenv.RepoRoot(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	pkgs := map[string][]*ast.File{} // by directory
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "build" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, files := range pkgs {
		local := map[string]bool{} // top-level names and Type.Method
		for _, f := range files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil && len(d.Recv.List) == 1 {
						local[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
					} else {
						local[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							local[s.Name.Name] = true
							if st, ok := s.Type.(*ast.StructType); ok {
								for _, fld := range st.Fields.List {
									for _, n := range fld.Names {
										local[s.Name.Name+"."+n.Name] = true
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								local[n.Name] = true
							}
						}
					}
				}
			}
		}
		for _, f := range files {
			imports := map[string]string{}
			for _, is := range f.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				name := filepath.Base(p)
				if is.Name != nil {
					name = is.Name.Name
				}
				imports[name] = p
			}
			for _, cg := range f.Comments {
				text := cg.Text()
				defined := map[string]bool{} // "[ref]: URL" link definitions
				for _, m := range regexp.MustCompile(`(?m)^\[([^\]]+)\]:\s`).FindAllStringSubmatch(text, -1) {
					defined[m[1]] = true
				}
				for _, m := range docLink.FindAllStringSubmatchIndex(text, -1) {
					end := m[1]
					if end < len(text) && (text[end] == ':' || text[end] == '(') {
						continue // a link definition or markdown, not a doc link
					}
					ref := text[m[2]:m[3]]
					if defined[ref] {
						continue // a URL link, defined in the comment
					}
					checked++
					if !resolves(ref, local, imports, imp) {
						t.Errorf("%s: doc link [%s] resolves to nothing", rel(root, fset.Position(cg.Pos()).Filename), ref)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d doc links checked: is the walk finding the sources?", checked)
	}
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	}
	return ""
}

// resolves reports whether ref names something: in the package (local),
// or exported by an imported package.
func resolves(ref string, local map[string]bool, imports map[string]string, imp types.Importer) bool {
	if local[ref] {
		return true
	}
	parts := strings.Split(ref, ".")
	path, ok := imports[parts[0]]
	if !ok || len(parts) < 2 {
		// A single word that is not a local name: a plain bracketed word
		// in prose ([sic]), not meant as a link, unless it is
		// capitalised like an identifier.
		return len(parts) == 1 && !(parts[0][0] >= 'A' && parts[0][0] <= 'Z')
	}
	pkg, err := imp.Import(path)
	if err != nil {
		return false
	}
	obj := pkg.Scope().Lookup(parts[1])
	if obj == nil {
		return false
	}
	if len(parts) == 2 {
		return true
	}
	o, _, _ := types.LookupFieldOrMethod(obj.Type(), true, pkg, parts[2])
	return o != nil
}
