package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering the packages keep (issue 10): the contract imports no
// format, the screen imports no store or driver, the run model only the
// contract, and the command line reaches the panes only through the
// explorer. Imports point down (issue 26): no store backend (remote is
// one) and not the shared tail both vigil serve and the ssh agent run
// (livetail) reaches a package that faces the user. Each rule is checked
// on what `go list` says the packages really import.

const module = "github.com/vigil-run/vigil"

// Forbidden paths: a path ending in /... stands for the package and every
// package under it. database/sql/driver is not forbidden: it is an
// interface package (colour libraries implement its Valuer), not a driver.
var (
	adapters = []string{module + "/store/ioharness/...", module + "/store/starweaver/...", module + "/store/leviath/...",
		module + "/store/claudecode/...", module + "/store/codex/...", module + "/store/geminicli/...", module + "/store/opencode/...", module + "/store/gate/..."}
	drivers = []string{"database/sql", "modernc.org/sqlite/..."}
	// faces are the packages that face the user: the explorer, its panes,
	// the SSH UI server and the command line, above every store.
	faces = []string{module + "/tui/...", module + "/views/...", module + "/serve/...", module + "/cli/..."}
)

// rule is one import rule: the package (or, for a pkg ending in /..., each
// package under it) may not reach any of forbidden, through its whole
// dependency graph (deps) or in its own files (direct).
type rule struct {
	pkg       string
	direct    bool
	forbidden []string
	only      []string // when set: every import must be the standard library or one of these
	why       string
}

var rules = []rule{
	{pkg: "store", forbidden: append(slices.Clone(adapters), drivers...), why: "the contract holds no format and no driver"},
	{pkg: "views", forbidden: append(slices.Clone(adapters), drivers...), why: "panes draw what they are given"},
	{pkg: "tui", forbidden: append(slices.Clone(adapters), drivers...), why: "the explorer reads a store.Source"},
	{pkg: "runmodel", direct: true, only: []string{module + "/store"}, why: "the run model is the contract's, nothing else's"},
	{pkg: "store/leviath", forbidden: drivers, why: "journals need no SQLite"},
	{pkg: "cli", direct: true, forbidden: []string{module + "/views/..."}, why: "the CLI formats with internal/textfmt, not the panes"},
	{pkg: "otelexport", forbidden: append(slices.Clone(adapters), drivers...), why: "the exporter reads a store.Source, whatever the format"},
	{pkg: "serve", forbidden: append(slices.Clone(adapters), drivers...), why: "vigil serve shares a store.Source, whatever the format"},
	{pkg: "store/...", forbidden: faces, why: "a store reads and writes runs; who shows them is above it"},
	{pkg: "remote", forbidden: faces, why: "the ssh link is a store backend: its agent tails through livetail"},
	{pkg: "livetail", forbidden: faces, why: "the shared tail is below vigil serve and the ssh agent that both run it"},
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string // its own files' imports (not its tests')
	Deps       []string // everything it links, transitively
}

func goList(t *testing.T, args ...string) map[string]listed {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// matches reports whether an import path is a forbidden one.
func matches(path, forbidden string) bool {
	if base, tree := strings.CutSuffix(forbidden, "/..."); tree {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == forbidden
}

// violations lists how the packages break the rules. std says whether an
// import path is the standard library's.
func violations(rules []rule, pkgs map[string]listed, std func(string) bool) []string {
	var out []string
	for _, r := range rules {
		var under []string
		for path := range pkgs {
			if matches(path, module+"/"+r.pkg) {
				under = append(under, path)
			}
		}
		if len(under) == 0 {
			out = append(out, fmt.Sprintf("%s: not listed", r.pkg))
			continue
		}
		slices.Sort(under)
		for _, path := range under {
			p, name := pkgs[path], strings.TrimPrefix(path, module+"/")
			seen := p.Deps
			if r.direct {
				seen = p.Imports
			}
			for _, dep := range seen {
				for _, f := range r.forbidden {
					if matches(dep, f) {
						out = append(out, fmt.Sprintf("%s imports %s (%s)", name, dep, r.why))
					}
				}
				if r.only != nil && !std(dep) && !slices.Contains(r.only, dep) {
					out = append(out, fmt.Sprintf("%s imports %s (%s)", name, dep, r.why))
				}
			}
		}
	}
	return out
}

func TestLayering(t *testing.T) {
	args := []string{}
	for _, r := range rules {
		args = append(args, "./"+r.pkg)
	}
	pkgs := goList(t, args...)
	std := goList(t, "std")
	isStd := func(path string) bool { _, ok := std[path]; return ok }
	for _, v := range violations(rules, pkgs, isStd) {
		t.Error(v)
	}
}

// TestLayeringCatches shows the check is not vacuous: packages that break
// each kind of rule are reported.
func TestLayeringCatches(t *testing.T) {
	pkgs := map[string]listed{
		module + "/store":                   {Deps: []string{"fmt", module + "/store/ioharness"}},
		module + "/views":                   {Deps: []string{"modernc.org/sqlite/lib"}},
		module + "/tui":                     {Deps: []string{"database/sql"}},
		module + "/runmodel":                {Imports: []string{"time", module + "/views"}},
		module + "/store/leviath":           {Deps: []string{"modernc.org/sqlite"}},
		module + "/cli":                     {Imports: []string{module + "/views"}, Deps: []string{module + "/views"}},
		module + "/store/union":             {Deps: []string{module + "/watch", module + "/tui"}},
		module + "/remote":                  {Deps: []string{module + "/livetail", module + "/serve"}},
		module + "/livetail":                {Deps: []string{module + "/store", module + "/cli"}},
		module + "/store/ioharness":         {Deps: []string{module + "/store/ioharness/internal/schema", module + "/store/ioharness/harness"}},
		module + "/store/ioharness/harness": {Deps: []string{module + "/store/ioharness/internal/schema", module + "/store/ioharness"}},
	}
	got := violations(rules, pkgs, func(p string) bool { return !strings.Contains(p, ".") })
	if len(got) != len(rules) {
		t.Fatalf("%d of %d broken rules reported: %q", len(got), len(rules), got)
	}
	fine := map[string]listed{module + "/tui": {Deps: []string{"database/sql/driver"}}}
	if got := violations(rules[2:3], fine, func(string) bool { return true }); len(got) != 0 {
		t.Fatalf("database/sql/driver reported: %q", got)
	}
}
