package keymap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// Keys are named only in this package: the views and the root model match
// bindings, never a key's name, and never fake a key press to reuse a code
// path. The check reads their source (tests excluded: they play the user).
func TestKeysNamedOnlyInKeymap(t *testing.T) {
	names := map[string]bool{}
	k := Default()
	for _, b := range append(bindings(k), k.Submit, k.Dismiss) {
		for _, key := range b.Keys() {
			names[key] = true
		}
	}
	for _, dir := range []string{"../views", "../tui"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if why := keyUse(n, names); why != "" {
					t.Errorf("%s: %s", fset.Position(n.Pos()), why)
				}
				return true
			})
		}
	}
}

// bindings is every binding the help lists.
func bindings(k KeyMap) []key.Binding {
	var out []key.Binding
	for _, g := range k.Groups() {
		out = append(out, g.Bindings...)
	}
	return out
}

// keyUse says what is wrong with a node that names a key ("" if nothing).
func keyUse(n ast.Node, names map[string]bool) string {
	switch n := n.(type) {
	case *ast.CompositeLit:
		if sel, ok := n.Type.(*ast.SelectorExpr); ok && isPkg(sel.X, "tea") && strings.HasPrefix(sel.Sel.Name, "Key") {
			return "a faked key press (tea." + sel.Sel.Name + "{…}): call what the key would have"
		}
	case *ast.CallExpr:
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isPkg(sel.X, "key") && sel.Sel.Name != "Matches" {
			return "key." + sel.Sel.Name + " outside keymap: bind keys in keymap"
		}
	case *ast.BinaryExpr:
		if n.Op == token.EQL || n.Op == token.NEQ {
			if isStringCall(n.X) && isKeyName(n.Y, names) || isStringCall(n.Y) && isKeyName(n.X, names) {
				return "a key compared by name: match a binding"
			}
		}
	case *ast.SwitchStmt:
		if isStringCall(n.Tag) {
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if isKeyName(e, names) {
						return "a key switched on by name: match a binding"
					}
				}
			}
		}
	}
	return ""
}

func isPkg(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isStringCall is x.String(), the way a key press names itself.
func isStringCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok || len(c.Args) != 0 {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "String"
}

func isKeyName(e ast.Expr, names map[string]bool) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && names[s]
}
