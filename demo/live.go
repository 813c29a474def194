package demo

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The live tree: a coordinator cutting a release spawns three workers
// (parser, release, docs); the parser spawns a fuzzing grandchild. The
// release worker's pipeline file and build command wait for approval, the
// parser asks the operator a question, and the docs worker's plan waits
// for a verdict. At speed 1 the plan appears 7–10 s in, the write approval
// 10–11 s in and the question 12–16 s in (it depends on the seed); the
// command's approval comes once the write is approved.

const (
	treeCeiling = 120_000
	maxAgents   = 5
	maxDepth    = 2
)

// startLiveTree starts the coordinator the way io-harness's run_tree does:
// start_run, acquire_lease, set_provider, record_run_policy, then the
// provider endpoint's net check at step 0.
func (e *engine) startLiveTree(ttl time.Duration) (*agent, error) {
	w := e.w
	goal := fmt.Sprintf("Cut release %s of %s: fix the parser TODOs, write the release pipeline, build the archives and update the docs",
		w.version, w.project)
	root, err := e.startRoot(goal, w.policyJSON(), ttl)
	if err != nil {
		return nil, err
	}
	t := &tree{ceiling: treeCeiling, agents: 1, maxAgents: maxAgents, maxDepth: maxDepth, byName: map[string]*agent{}}
	root.t, root.name, root.brain = t, "coordinator", coordinator
	root.verifyFile, root.needle = "RELEASE_NOTES.md", w.version
	root.prof = liveProfile
	e.files["src/parse.go"] = parseBefore
	e.files["README.md"] = w.readme()
	e.files["CHANGELOG.md"] = w.changelogBefore()
	e.logf(root, "started: %s", goal)
	return root, nil
}

// startRoot starts and leases a root run.
func (e *engine) startRoot(goal, policy string, ttl time.Duration) (*agent, error) {
	ctx, w := e.ctx, e.w
	id, err := e.st.StartRun(ctx, goal, w.ws)
	if err != nil {
		return nil, err
	}
	e.stampAt(stamp{table: "runs", col: "started_at", where: "id = ?", args: []any{num(id)}})
	if _, err := e.st.AcquireLease(ctx, id, ttl); err != nil {
		return nil, err
	}
	e.stampAt(stamp{table: "run_leases", col: "acquired_at", where: "run_id = ?", args: []any{num(id)}})
	e.stampAt(stamp{table: "run_leases", col: "renewed_at", where: "run_id = ?", args: []any{num(id)}})
	if err := e.st.SetProvider(ctx, id, w.provider); err != nil {
		return nil, err
	}
	if err := e.st.RecordRunPolicy(ctx, id, policy); err != nil {
		return nil, err
	}
	if err := e.st.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: id, Step: 0, Kind: store.PolicyDecision, Act: "net",
		Target: "openrouter.ai:443", Rule: "openrouter.ai:443", Layer: "provider", Decision: store.PolicyAllow, Source: "policy"}); err != nil {
		return nil, err
	}
	a := e.newAgent(id, "", nil, nil, goal, "", "", liveProfile)
	a.leased = true
	a.notes = append([]string(nil), e.notes...)
	return a, nil
}

// idleWaits are how long an idle coordinator waits for mail, step after
// step, before it stops asking and simply waits for its children.
var idleWaits = []time.Duration{6 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
	30 * time.Second, 45 * time.Second, 60 * time.Second, 60 * time.Second, 90 * time.Second}

func coordinator(a *agent) *turn {
	w, t := a.e.w, a.t
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{readFile("README.md", w.readme())}, noRetry: true}
	case 2:
		return &turn{calls: []*call{grep("TODO", "src/**",
			"src/parse.go:18: 	// TODO: accept CRLF line endings",
			"src/parse.go:33: 			// TODO: decide what an empty deps list means",
			"src/lexer.go:3: // TODO: report the column of a bad line, not only its number")},
			retries: []string{"Server (HTTP 529)"}}
	case 3:
		return &turn{text: "Three parts can go at once: the parser fixes, the release pipeline and the docs. Starting with the parser.",
			calls: []*call{spawn(spawnSpec{as: "parser", goal: "Fix the open TODOs in src/parse.go and keep go test ./... green",
				verifyFile: "src/parse.go", needle: "ReplaceAll", maxSteps: 12, brain: parser})}}
	case 4:
		return &turn{calls: []*call{spawn(spawnSpec{as: "release", goal: fmt.Sprintf("Write the release pipeline to deploy/release.yaml and build the %s archives with make release", w.version),
			verifyFile: fmt.Sprintf("build/%s_%s_checksums.txt", w.project, w.version), needle: w.project + "_" + w.version, maxSteps: 10, brain: release})}}
	case 5:
		return &turn{calls: []*call{spawn(spawnSpec{as: "docs", goal: fmt.Sprintf("Add %s to CHANGELOG.md, update the install line in README.md and regenerate docs/cli.md", w.version),
			verifyFile: "CHANGELOG.md", needle: "## " + w.version, maxSteps: 10, brain: docs})}}
	case 6:
		return &turn{calls: []*call{readFile("go.mod", w.gomod())}, unreported: true}
	case 7:
		return &turn{calls: []*call{listDir("src", "lexer.go  412 B", "parse.go  1.1 KiB", "parse_test.go  2.3 KiB", "testdata/  dir")}}
	case 8:
		if t.byName["fuzz"] == nil {
			a.phase--
			return &turn{calls: []*call{readFile("Makefile", w.makefile())}}
		}
		return &turn{text: "A benchmark pass would help, but the tree may be full.",
			calls: []*call{spawn(spawnSpec{as: "bench", goal: "Benchmark Parse on the large manifests in testdata/ and report allocations",
				verifyFile: "docs/bench.md", needle: "allocs/op", maxSteps: 6, brain: parser})}}
	}
	a.phase-- // from here on the coordinator waits, then wraps up
	if a.inflight > 0 {
		if a.idle >= len(idleWaits) {
			return nil // stop asking for mail; wait for the children
		}
		wait := idleWaits[a.idle]
		a.idle++
		return &turn{calls: []*call{readMessages(wait)}}
	}
	denied := ""
	if r := t.byName["release"]; r != nil && r.outcome == store.OutcomeDenied {
		denied = r.deniedWhat
	}
	a.wrap++
	if a.wrap == 1 && denied != "" {
		return &turn{text: "The operator denied part of the release; recording that so the next run does not retry it blindly.",
			calls: []*call{remember("release.denied", fmt.Sprintf("For %s the operator denied: %s. Do that step by hand or ask first.", w.version, denied))}}
	}
	answer := ""
	if p := t.byName["parser"]; p != nil && p.outcome == store.OutcomeSuccess {
		answer = "return an empty Document"
		if strings.Contains(strings.ToLower(p.answer), "err") {
			answer = "return ErrEmptyInput"
		}
	}
	notes := w.releaseNotes(a.endings, denied, answer)
	summary := fmt.Sprintf("Release %s: parser fixed and fuzzed, pipeline written, archives built, docs updated.", w.version)
	if denied != "" {
		summary = fmt.Sprintf("Release %s is not complete: the operator denied %s.", w.version, denied)
	}
	if a.endings["docs"] == store.OutcomePlanRejected {
		summary += " The docs plan was cancelled, so CHANGELOG.md is unchanged."
	}
	return &turn{text: summary, calls: []*call{writeFile("RELEASE_NOTES.md", notes)},
		completion: len(notes) / 4, final: store.OutcomeSuccess}
}

func parser(a *agent) *turn {
	w := a.e.w
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{readFile("src/parse.go", a.e.files["src/parse.go"])}}
	case 2:
		return &turn{calls: []*call{grep("TODO", "src/**",
			"src/parse.go:18: 	// TODO: accept CRLF line endings",
			"src/parse.go:33: 			// TODO: decide what an empty deps list means",
			"src/lexer.go:3: // TODO: report the column of a bad line, not only its number")}}
	case 3:
		return &turn{text: "Fuzzing Parse does not depend on the TODO fixes; handing it to a sub-agent.",
			calls: []*call{spawn(spawnSpec{as: "fuzz", goal: "Add a fuzz test for Parse and fix any crash it finds",
				verifyFile: "src/parse_fuzz_test.go", needle: "func FuzzParse", maxSteps: 10, brain: fuzzer})}}
	case 4:
		return &turn{calls: []*call{editFile("src/parse.go", "\t// TODO: accept CRLF line endings\n", "\tsrc = strings.ReplaceAll(src, \"\\r\\n\", \"\\n\")\n",
			func(s string) string {
				return strings.Replace(s, "\t// TODO: accept CRLF line endings\n", "\tsrc = strings.ReplaceAll(src, \"\\r\\n\", \"\\n\")\n", 1)
			})}, completion: 40}
	case 5:
		return &turn{calls: []*call{exec("go", []string{"go", "test", "./..."}, 0,
			"ok  \texample.com/"+w.project+"/src\t0.391s\nok  \texample.com/"+w.project+"/cmd/"+w.project+"\t0.102s\n", 2400*time.Millisecond)}}
	case 6:
		return &turn{text: "The second TODO is a product decision, not a code one. Asking.",
			calls: []*call{ask("Parse(\"\") currently returns an empty Document. Should empty input be an error instead?",
				"src/parse.go: the CLI prints nothing and exits 0 for an empty manifest; `check` would then pass on an empty file.",
				"Return ErrEmptyInput", "Return an empty Document")}}
	case 7:
		asError := strings.Contains(strings.ToLower(a.answer), "err")
		choice := "an empty Document"
		if asError {
			choice = "ErrEmptyInput"
		}
		return &turn{calls: []*call{
			remember("parser.empty-input", "The operator decided: Parse of empty input returns "+choice+"."),
			editFile("src/parse.go", "// TODO: decide what an empty deps list means", "if value != \"\" {",
				func(s string) string { return parseEmpty(s, asError) }),
		}, completion: 120}
	case 8:
		return &turn{text: "Both parser TODOs are done and the tests pass; empty input now returns " + map[bool]string{true: "ErrEmptyInput", false: "an empty Document"}[strings.Contains(strings.ToLower(a.answer), "err")] + ", as the operator decided. The lexer TODO is cosmetic; left for later.",
			calls: []*call{exec("go", []string{"go", "test", "./..."}, 0,
				"ok  \texample.com/"+w.project+"/src\t0.402s\nok  \texample.com/"+w.project+"/cmd/"+w.project+"\t0.097s\n", 2200*time.Millisecond)},
			final: store.OutcomeSuccess}
	}
	return nil
}

func release(a *agent) *turn {
	w := a.e.w
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{readFile("Makefile", w.makefile())}, retries: []string{"RateLimited (HTTP 429)"}}
	case 2:
		return &turn{calls: []*call{find("deploy/*", "deploy/Dockerfile", "deploy/k8s.yaml")}}
	case 3:
		body := w.releaseYAML()
		c := writeFile("deploy/release.yaml", body)
		c.gate = &gate{act: "write", target: "deploy/release.yaml", content: &body}
		return &turn{text: "deploy/ is outside what I may write freely; the pipeline file needs the operator's approval.",
			calls: []*call{c}, completion: len(body) / 4}
	case 4:
		line := "rm -rf build/ && make release"
		c := shell(line, 0, w.makeReleaseOutput(), 8*time.Second)
		c.gate = &gate{act: "exec", target: line}
		return &turn{calls: []*call{c}}
	case 5:
		path := fmt.Sprintf("build/%s_%s_checksums.txt", w.project, w.version)
		return &turn{text: fmt.Sprintf("Release %s is built: six archives and their checksums are in build/.", w.version),
			calls: []*call{readFile(path, w.checksums(a.rng))}, final: store.OutcomeSuccess}
	}
	return nil
}

func docs(a *agent) *turn {
	w := a.e.w
	if a.phase == 0 {
		a.phase++
		return &turn{calls: []*call{gitLog("v"+w.prev, w.gitLog())}}
	}
	switch a.verdict {
	case "":
		if a.plans > 0 {
			break // the plan is decided inside its step; nothing to do before
		}
		fallthrough
	case store.VerdictRevise:
		intents := []string{
			"Collect the changes since v" + w.prev + " from git log",
			"Add a " + w.version + " section to CHANGELOG.md",
			"Point the install line in README.md at v" + w.version,
			"Regenerate docs/cli.md from `" + w.project + " --help`",
		}
		text := "Proposing a plan before touching any docs."
		if a.verdict == store.VerdictRevise {
			intents = slices.Insert(intents, 2, "Address the review: "+a.correction)
			text = "Revised the plan as asked."
		}
		a.verdict = ""
		return &turn{text: text, calls: []*call{proposePlan(intents...)}}
	}
	a.phase++
	switch a.phase {
	case 2:
		body := w.changelog("")
		return &turn{calls: []*call{writeFile("CHANGELOG.md", body)},
			completion: len(body) / 4}
	case 3:
		old := "@v" + w.prev
		return &turn{calls: []*call{editFile("README.md", old, "@v"+w.version,
			func(s string) string { return strings.Replace(s, old, "@v"+w.version, 1) })}}
	case 4:
		return &turn{calls: []*call{exec("go", []string{"go", "run", "./cmd/" + w.project, "--help"}, 0, w.cliHelp(), 1500*time.Millisecond)}}
	case 5:
		body := w.cliDoc()
		return &turn{text: "CHANGELOG.md, README.md and docs/cli.md are updated for " + w.version + ".",
			calls:      []*call{writeFile("docs/cli.md", body)},
			completion: len(body) / 4, final: store.OutcomeSuccess}
	}
	return nil
}

func fuzzer(a *agent) *turn {
	w := a.e.w
	a.phase++
	switch a.phase {
	case 1:
		return &turn{calls: []*call{readFile("src/parse.go", a.e.files["src/parse.go"])}}
	case 2:
		return &turn{text: "A seed corpus would make the fuzzer faster; trying a helper.",
			calls: []*call{spawn(spawnSpec{as: "corpus", goal: "Collect real manifests into testdata/fuzz/FuzzParse as seed inputs",
				verifyFile: "testdata/fuzz/FuzzParse/seed1", needle: "name", maxSteps: 5, brain: fuzzer})}}
	case 3:
		return &turn{text: "No helper; writing the seeds into the test instead.",
			calls:      []*call{writeFile("src/parse_fuzz_test.go", fuzzTest)},
			completion: len(fuzzTest) / 4}
	case 4:
		out := joinLines(
			"fuzz: elapsed: 0s, gathering baseline coverage: 0/4 completed",
			"fuzz: elapsed: 0s, gathering baseline coverage: 4/4 completed, now fuzzing with 8 workers",
			"fuzz: elapsed: 3s, execs: 187312 (62401/sec), new interesting: 11 (total: 15)",
			"fuzz: elapsed: 4s, execs: 241095 (58817/sec), new interesting: 13 (total: 17)",
			"--- FAIL: FuzzParse (4.21s)",
			"    --- FAIL: FuzzParse (0.00s)",
			"        testing.go:1591: panic: runtime error: index out of range [0] with length 0",
			"            goroutine 41 [running]:",
			"            example.com/"+w.project+"/src.unquote(...)",
			"            	/home/dev/src/"+w.project+"/src/parse.go:45",
			"    Failing input written to testdata/fuzz/FuzzParse/3f9a0c41d2b7e815",
			"    To re-run:",
			"    go test -run=FuzzParse/3f9a0c41d2b7e815",
			"FAIL",
			"exit status 1",
			"FAIL\texample.com/"+w.project+"/src\t4.388s",
		)
		return &turn{calls: []*call{exec("go", []string{"go", "test", "-run=^$", "-fuzz=FuzzParse", "-fuzztime=15s", "./src"}, 1, out, 5*time.Second)}}
	case 5:
		return &turn{text: "The fuzzer found a crash: `name =` unquotes an empty string. Guarding the index.",
			calls: []*call{editFile("src/parse.go", "\tif s[0] == '\"' && s[len(s)-1] == '\"' {", "\tif len(s) >= 2 && s[0] == '\"' && s[len(s)-1] == '\"' {", parseFixed)}}
	case 6:
		return &turn{text: "FuzzParse runs clean for 15s after the fix; the crashing input is kept in testdata/fuzz as a regression case.",
			calls: []*call{exec("go", []string{"go", "test", "./src"}, 0, "ok  \texample.com/"+w.project+"/src\t0.433s\n", 1800*time.Millisecond)},
			final: store.OutcomeSuccess}
	}
	return nil
}
