package checks_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPI keeps the internal/ packages out of every public package's
// API: an exported declaration of a package a user can import names no
// type of an internal/ package, which that user could not name.
func TestPublicAPI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on the PATH")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, dir, _ := strings.Cut(line, " ")
		if strings.Contains(pkg+"/", "/internal/") || strings.HasSuffix(pkg, "/cmd/idemlint") {
			continue
		}
		for _, leak := range internalInAPI(t, dir) {
			t.Errorf("%s: %s", pkg, leak)
		}
	}
}

// internalInAPI returns, for each exported declaration of the package in
// dir whose API names an internal/ package, where and what it names.
func internalInAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var leaks []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		internal := map[string]string{} // import name -> path, internal ones only
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path+"/", "/internal/") {
				continue
			}
			local := filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			internal[local] = path
		}
		if len(internal) == 0 {
			continue
		}
		names := func(what string, node ast.Node) {
			if node == nil {
				return
			}
			ast.Inspect(node, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.StructType:
					// Unexported fields are no one's API.
					for _, field := range n.Fields.List {
						if len(field.Names) == 0 || field.Names[0].IsExported() {
							ast.Inspect(field.Type, func(m ast.Node) bool { return named(m, internal, what, fset, &leaks) })
						}
					}
					return false
				}
				return named(n, internal, what, fset, &leaks)
			})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
					continue
				}
				names(d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names(s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names(n.Name, s.Type)
								for _, v := range s.Values {
									names(n.Name, literalType(v))
								}
							}
						}
					}
				}
			}
		}
	}
	return leaks
}

// named records n when it names a type or value of an internal package.
func named(n ast.Node, internal map[string]string, what string, fset *token.FileSet, leaks *[]string) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return true
	}
	if x, ok := sel.X.(*ast.Ident); ok {
		if path, ok := internal[x.Name]; ok {
			*leaks = append(*leaks, fmt.Sprintf("%s: %s names %s.%s", fset.Position(sel.Pos()), what, path, sel.Sel.Name))
		}
	}
	return false
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	for {
		switch t := typ.(type) {
		case *ast.StarExpr:
			typ = t.X
		case *ast.IndexExpr:
			typ = t.X
		case *ast.IndexListExpr:
			typ = t.X
		case *ast.Ident:
			return t.IsExported()
		default:
			return false
		}
	}
}

// literalType returns the type a composite literal (or its address) spells,
// which is the type of a variable declared without one; nil for any other
// value, whose type its declaration does not spell.
func literalType(v ast.Expr) ast.Node {
	if u, ok := v.(*ast.UnaryExpr); ok && u.Op == token.AND {
		v = u.X
	}
	if c, ok := v.(*ast.CompositeLit); ok && c.Type != nil {
		return c.Type
	}
	return nil
}
