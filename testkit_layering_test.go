package main

import (
	"strings"
	"testing"
)

// testkit is where the test rigs live: no package's own files import it
// (only tests and the rigs themselves), so none of it is in a binary.
const testkit = module + "/internal/testkit/..."

// rigImports lists the packages outside testkit whose own files import it.
func rigImports(pkgs map[string]listed) []string {
	var out []string
	for path, p := range pkgs {
		if matches(path, testkit) {
			continue
		}
		for _, dep := range p.Imports {
			if matches(dep, testkit) {
				out = append(out, path+" imports "+dep)
			}
		}
	}
	return out
}

func TestRigsAreForTestsOnly(t *testing.T) {
	for _, v := range rigImports(goList(t, "./...")) {
		t.Errorf("%s: test rigs are for tests only", v)
	}
}

func TestRigsAreForTestsOnlyCatches(t *testing.T) {
	pkgs := map[string]listed{
		module + "/cli":                        {Imports: []string{"fmt", module + "/internal/testkit/fixture"}},
		module + "/internal/testkit/agreement": {Imports: []string{module + "/internal/testkit"}},
		module + "/internal/testkitchen":       {Imports: []string{module + "/internal/textfmt"}},
	}
	got := rigImports(pkgs)
	if len(got) != 1 || !strings.HasPrefix(got[0], module+"/cli imports ") {
		t.Fatalf("want cli's import of a rig, and only it: %q", got)
	}
}
