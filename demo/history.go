package demo

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// History: four runs that finished before the live tree started, one of
// each ending — success, step_cap_reached, denied (a deferred approval the
// host later resumed with a denial) and a small tree whose children end in
// success and stalled. They are written instantly; their timestamps say
// they ran over the last few hours.

type historyRun struct {
	kind  string // success, step_cap, denied, tree
	start time.Duration
}

func pickHistory(r *rand.Rand, w *world) []historyRun {
	kinds := []string{"json-flag", "toml-migration", "branch-cleanup", "tree"}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	starts := []time.Duration{-5*time.Hour - 12*time.Minute, -3*time.Hour - 37*time.Minute, -2*time.Hour - 5*time.Minute, -48 * time.Minute}
	var out []historyRun
	for i, k := range kinds {
		jitter := time.Duration(r.Int64N(int64(9*time.Minute))) - 4*time.Minute
		out = append(out, historyRun{kind: k, start: starts[i] + jitter})
	}
	return out
}

func (w *world) historyPolicyJSON() string {
	return compactJSON(map[string]any{
		"layers": []any{
			map[string]any{"name": "project", "rules": []any{
				map[string]string{"act": "write", "effect": "allow", "pattern": "cmd/**"},
				map[string]string{"act": "write", "effect": "allow", "pattern": "internal/**"},
				map[string]string{"act": "write", "effect": "allow", "pattern": "notes/**"},
				map[string]string{"act": "write", "effect": "deny", "pattern": ".env"},
				map[string]string{"act": "exec", "effect": "allow", "pattern": "go"},
				map[string]string{"act": "exec", "effect": "allow", "pattern": "git"},
				map[string]string{"act": "exec", "effect": "ask", "pattern": "git push *"},
			}},
			map[string]any{"name": "provider", "rules": []any{
				map[string]string{"act": "net", "effect": "allow", "pattern": "openrouter.ai:443"},
			}},
		},
		"defaults": map[string]string{"read": "allow", "write": "ask", "exec": "ask", "net": "deny"},
	})
}

// writeHistory writes the finished runs, oldest first.
func (e *engine) writeHistory() error {
	e.history = true
	defer func() { e.history, e.now, e.agents = false, 0, nil }()
	for _, h := range e.w.history {
		e.now, e.agents = h.start, nil
		var root *agent
		var err error
		switch h.kind {
		case "json-flag":
			root, err = e.historyRoot(fmt.Sprintf("Add a --json flag to `%s status`", e.w.project), historySuccess)
		case "toml-migration":
			root, err = e.historyRoot("Migrate config loading from YAML to TOML", historyStepCap)
		case "branch-cleanup":
			root, err = e.historyRoot("Delete the stale release branches on origin", historyDenied)
		case "tree":
			root, err = e.historyRoot("Triage the flaky tests in internal/cache", historyTree)
			if err == nil {
				root.t = &tree{ceiling: 150_000, agents: 1, maxAgents: 4, maxDepth: 1, byName: map[string]*agent{}}
			}
		}
		if err != nil {
			return err
		}
		if err := e.loop(); err != nil {
			return err
		}
		if root.deferred != "" {
			if err := e.resumeWithDenial(root); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *engine) historyRoot(goal string, brain func(*agent) *turn) (*agent, error) {
	a, err := e.startRoot(goal, e.w.historyPolicyJSON(), harness.DefaultLeaseTTL)
	if err != nil {
		return nil, err
	}
	a.brain, a.prof = brain, historyProfile
	e.logf(a, "started: %s", goal)
	return a, nil
}

// resumeWithDenial is the host resuming the paused run with a human's
// denial (resume_with_decision, Deny): the row is decided, the decision
// recorded with source resumed:<id>, and the run ends denied.
func (e *engine) resumeWithDenial(a *agent) error {
	e.now += 26*time.Minute + time.Duration(a.rng.Int64N(int64(6*time.Minute)))
	if _, err := e.st.AcquireLease(e.ctx, a.id, harness.DefaultLeaseTTL); err != nil {
		return err
	}
	a.leased = true
	if _, err := e.st.ResolvePending(e.ctx, a.deferred, store.VerdictDeny); err != nil {
		return err
	}
	g := a.deferredGate
	if err := e.st.RecordPolicyEvent(e.ctx, store.PolicyEvent{RunID: a.id, Step: a.step, Kind: store.PolicyDecision, Act: g.act,
		Target: g.target, Decision: store.PolicyDeny, Source: "resumed:" + a.deferred}); err != nil {
		return err
	}
	e.logf(a, "resumed with a denial of request %s", a.deferred)
	return a.finish(store.OutcomeDenied)
}

func refusedWrite(path, rule string) *call {
	return &call{name: "write_file", args: map[string]any{"path": path, "content": "CONFIG_FORMAT=toml\n"}, run: func(a *agent, n int) (result, error) {
		if err := a.e.st.RecordPolicyEvent(a.e.ctx, store.PolicyEvent{RunID: a.id, Step: n, Kind: store.PolicyRefusal, Act: "write",
			Target: path, Rule: rule, Layer: "project"}); err != nil {
			return result{}, err
		}
		return result{decision: "write refused", obs: store.Observation{Kind: "error",
			Text: "\n[write refused] " + path + " (rule " + rule + ") — the policy forbids this; try another path\n"}}, nil
	}}
}

const statusBefore = `package main

import (
	"fmt"
	"os"
)

func runStatus(args []string) error {
	doc, err := loadManifest(manifestPath(args))
	if err != nil {
		return err
	}
	printTree(os.Stdout, doc)
	return nil
}
`

const statusAfter = `package main

import (
	"encoding/json"
	"flag"
	"os"
)

func runStatus(args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	doc, err := loadManifest(manifestPath(fs.Args()))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(doc)
	}
	printTree(os.Stdout, doc)
	return nil
}
`

func historySuccess(a *agent) *turn {
	w := a.e.w
	path := "cmd/" + w.project + "/status.go"
	a.phase++
	switch a.phase {
	case 1:
		a.e.files[path] = statusBefore
		return &turn{calls: []*call{readFile(path, statusBefore)}, noRetry: true}
	case 2:
		return &turn{calls: []*call{grep("printTree", "cmd/**", path+":13: 	printTree(os.Stdout, doc)", "cmd/"+w.project+"/tree.go:9: func printTree(out io.Writer, doc *parse.Document) {")}}
	case 3:
		return &turn{calls: []*call{editFile(path, "printTree(os.Stdout, doc)", "json.NewEncoder(os.Stdout).Encode(doc)",
			func(string) string { return statusAfter })}, completion: 180}
	case 4:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "./..."}, 0, "ok  \texample.com/"+w.project+"/cmd/"+w.project+"\t0.114s\n", 3*time.Second)},
			retries: []string{"Timeout"}}
	case 5:
		return &turn{calls: []*call{remember("status.json-shape", "`status --json` prints the Document as JSON (Name, Version, Deps); scripts parse it, keep it stable.")}}
	case 6:
		return &turn{calls: []*call{exec("go", []string{"go", "vet", "./..."}, 0, "", 2*time.Second)}, final: store.OutcomeSuccess}
	}
	return nil
}

func historyStepCap(a *agent) *turn {
	const path = "internal/config/config.go"
	a.phase++
	switch a.phase {
	case 1:
		a.e.files[path] = "package config\n\nimport \"gopkg.in/yaml.v3\"\n\nfunc Load(b []byte) (*Config, error) {\n\tvar c Config\n\treturn &c, yaml.Unmarshal(b, &c)\n}\n"
		return &turn{calls: []*call{readFile(path, a.e.files[path])}}
	case 2:
		return &turn{calls: []*call{grep("yaml\\.", "internal/**", path+":7: \treturn &c, yaml.Unmarshal(b, &c)",
			"internal/config/config_test.go:12: \tif err := yaml.Unmarshal(fixture, &want); err != nil {",
			"internal/config/defaults.go:20: \tout, _ := yaml.Marshal(d)")}}
	case 3:
		return &turn{calls: []*call{editFile(path, "gopkg.in/yaml.v3", "github.com/BurntSushi/toml", func(s string) string {
			return "package config\n\nimport \"github.com/BurntSushi/toml\"\n\nfunc Load(b []byte) (*Config, error) {\n\tvar c Config\n\treturn &c, toml.Unmarshal(b, &c)\n}\n"
		})}}
	case 4:
		return &turn{calls: []*call{exec("go", []string{"go", "build", "./..."}, 1,
			"internal/config/defaults.go:20:12: undefined: yaml\ninternal/config/config_test.go:12:12: undefined: yaml\n", 2*time.Second)}}
	case 5:
		return &turn{calls: []*call{refusedWrite(".env", ".env")}}
	case 6:
		return &turn{calls: []*call{editFile("internal/config/defaults.go", "yaml.Marshal(d)", "toml.Marshal(d)", func(s string) string { return s })}}
	case 7:
		return &turn{calls: []*call{exec("go", []string{"go", "build", "./..."}, 1,
			"go: github.com/BurntSushi/toml@v1.4.0: missing go.sum entry; to add it:\n\tgo mod download github.com/BurntSushi/toml\n", 2*time.Second)}}
	case 8:
		return &turn{text: "Ran out of steps with the build still failing on go.sum.", calls: []*call{readFile("go.sum", "golang.org/x/mod v0.22.0 h1:D4nJWe9zYcp1KmA4…\ngopkg.in/yaml.v3 v3.0.1 h1:fxVm/GzAzEWqLHuvctI…\n")},
			final: store.OutcomeStepCapReached}
	}
	return nil
}

func historyDenied(a *agent) *turn {
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{exec("git", []string{"git", "branch", "-r", "--merged", "main"}, 0,
			"  origin/main\n  origin/release/0.6\n  origin/release/0.7\n", 800*time.Millisecond)}}
	case 2:
		line := "git push origin --delete release/0.6 release/0.7"
		c := shell(line, 0, "", time.Second)
		c.gate = &gate{act: "exec", target: line, deferred: true}
		a.deferredGate = c.gate
		return &turn{text: "Both release branches are merged; deleting them on origin needs approval.", calls: []*call{c}}
	}
	return nil
}

func historyTree(a *agent) *turn {
	w := a.e.w
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-count=20", "./internal/cache"}, 1,
			"--- FAIL: TestEvictionOrder (0.02s)\n    lru_test.go:41: got [b c a], want [c b a]\nFAIL\nFAIL\texample.com/"+w.project+"/internal/cache\t1.204s\n", 4*time.Second)}}
	case 2:
		return &turn{text: "One agent reproduces the flake while I keep the picture; then one fixes it.",
			calls: []*call{spawn(spawnSpec{as: "repro", goal: "Reproduce the TestEvictionOrder flake and write down when it fails",
				verifyFile: "notes/flake.md", needle: "TestEvictionOrder", maxSteps: 6, wait: true, brain: historyRepro})}}
	case 3:
		return &turn{calls: []*call{spawn(spawnSpec{as: "fixer", goal: "Make TestEvictionOrder deterministic without sleeping",
			verifyFile: "internal/cache/lru_test.go", needle: "fakeClock", maxSteps: 8, wait: true, brain: historyFixer})}}
	case 4:
		return &turn{calls: []*call{editFile("internal/cache/lru_test.go", "time.Sleep(10 * time.Millisecond)", "clock.Advance(time.Minute)",
			func(string) string {
				return "func TestEvictionOrder(t *testing.T) {\n\tclock := &fakeClock{}\n\tc := New(2, clock)\n\tclock.Advance(time.Minute)\n}\n"
			})}}
	case 5:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-count=200", "./internal/cache"}, 0, "ok  \texample.com/"+w.project+"/internal/cache\t6.880s\n", 7*time.Second)}}
	case 6:
		return &turn{text: "TestEvictionOrder passes 200 of 200 with a fake clock.",
			calls: []*call{remember("cache.flaky-tests", "internal/cache tests must use fakeClock, never time.Sleep: TestEvictionOrder flaked 3/200 with a 10ms sleep.")},
			final: store.OutcomeSuccess}
	}
	return nil
}

func historyRepro(a *agent) *turn {
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-run", "TestEvictionOrder", "-count=200", "./internal/cache"}, 1,
			"--- FAIL: TestEvictionOrder (0.01s)\n    lru_test.go:41: got [b c a], want [c b a]\n(3 of 200 runs failed)\nFAIL\n", 5*time.Second)}}
	case 2:
		return &turn{calls: []*call{readFile("internal/cache/lru.go", "func (c *Cache) janitor() {\n\tfor range time.Tick(5 * time.Millisecond) {\n\t\tc.evictExpired()\n\t}\n}\n")}}
	case 3:
		body := "# TestEvictionOrder flake\n\nFails 3 of 200 runs: the test sleeps 10ms and assumes the janitor ran twice.\n"
		return &turn{text: "TestEvictionOrder fails 3/200: it sleeps 10ms and assumes the janitor goroutine ran in between.",
			calls: []*call{writeFile("notes/flake.md", body)}, final: store.OutcomeSuccess}
	}
	return nil
}

func historyFixer(a *agent) *turn {
	const path = "internal/cache/lru.go"
	a.phase++
	switch a.phase {
	case 1:
		a.e.files[path] = "func (c *Cache) janitor() {\n\tfor range time.Tick(5 * time.Millisecond) {\n\t\tc.evictExpired()\n\t}\n}\n"
		return &turn{calls: []*call{readFile(path, a.e.files[path])}}
	case 2:
		return &turn{calls: []*call{editFile(path, "\t\tc.evictExpired()", "\t\tc.mu.Lock()\n\t\tc.evictExpired()\n\t\tc.mu.Unlock()",
			func(s string) string {
				return "func (c *Cache) janitor() {\n\tfor range time.Tick(5 * time.Millisecond) {\n\t\tc.mu.Lock()\n\t\tc.evictExpired()\n\t\tc.mu.Unlock()\n\t}\n}\n"
			})}}
	case 3:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-count=50", "./internal/cache"}, 1, "--- FAIL: TestEvictionOrder (0.02s)\nFAIL\n", 3*time.Second)}}
	case 4:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-count=50", "./internal/cache"}, 1, "--- FAIL: TestEvictionOrder (0.01s)\nFAIL\n", 3*time.Second)},
			after: func(a *agent, n int) error {
				return a.e.st.RecordContextEvent(a.e.ctx, a.id, n, "replan", "3 steps without progress; replanning", nil)
			}}
	case 5:
		return &turn{text: "Locking the janitor does not change the order the test sees; the test itself depends on timing.",
			calls: []*call{exec("go", []string{"go", "test", "-count=50", "./internal/cache"}, 1, "--- FAIL: TestEvictionOrder (0.02s)\nFAIL\n", 3*time.Second)},
			after: func(a *agent, n int) error {
				return a.e.st.RecordContextEvent(a.e.ctx, a.id, n, "stalled", "still no progress after replanning", nil)
			}, final: store.OutcomeStalled, noDraw: true}
	}
	return nil
}
