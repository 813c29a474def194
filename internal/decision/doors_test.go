package decision

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The doors a person decides through write no decision but through a
// Maker: in their code a store's Decide is called only by a Decide method
// of their own, a store.Source handing the compare-and-set on (serve's
// per-session view, the remote store).
func TestEveryDoorGoesThroughMake(t *testing.T) {
	for _, dir := range []string{"tui", "cli", "serve", "remote"} {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (no files)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil || (fn.Recv != nil && fn.Name.Name == "Decide") {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok {
						if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Decide" {
							t.Errorf("%s: %s calls Decide itself: decide through decision.Maker.Make", fset.Position(c.Pos()), fn.Name.Name)
						}
					}
					return true
				})
			}
		}
	}
}
