package demo

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Each builder returns one tool call as the model makes it, and what
// io-harness records when it runs: the decision text, the observation (the
// ledger entry the next prompt carries), and any edit or policy event.

func readFile(path, body string) *call {
	return &call{name: "read_file", args: map[string]any{"path": path}, run: func(a *agent, n int) (result, error) {
		return result{decision: "read " + path, obs: store.Observation{Kind: "read", Target: path,
			Text: "\n[read " + path + "]\n" + body + "\n"}}, nil
	}}
}

func grep(pattern, glob string, hits ...string) *call {
	args := map[string]any{"pattern": pattern}
	if glob != "" {
		args["path"] = glob
	}
	return &call{name: "grep", args: args, run: func(a *agent, n int) (result, error) {
		q := rustQuote(pattern)
		return result{decision: fmt.Sprintf("grep %s (%d hits)", q, len(hits)), obs: store.Observation{Kind: "grep", Target: pattern,
			Text: "\n[grep " + q + "]\n" + strings.Join(hits, "\n") + "\n"}}, nil
	}}
}

func find(glob string, paths ...string) *call {
	return &call{name: "find", args: map[string]any{"glob": glob}, run: func(a *agent, n int) (result, error) {
		q := rustQuote(glob)
		return result{decision: fmt.Sprintf("find %s (%d paths)", q, len(paths)), obs: store.Observation{Kind: "find", Target: glob,
			Text: "\n[find " + q + "]\n" + strings.Join(paths, "\n") + "\n"}}, nil
	}}
}

func listDir(dir string, entries ...string) *call {
	return &call{name: "list_dir", args: map[string]any{"path": dir}, run: func(a *agent, n int) (result, error) {
		return result{decision: fmt.Sprintf("list_dir %s (%d entries)", dir, len(entries)), obs: store.Observation{Kind: "find", Target: dir,
			Text: "\n[list_dir " + dir + "]\n" + strings.Join(entries, "\n") + "\n"}}, nil
	}}
}

func gitLog(since, log string) *call {
	return &call{name: "git_log", args: map[string]any{"max_count": 20, "range": since + "..HEAD"}, run: func(a *agent, n int) (result, error) {
		return result{decision: "git_log ok", obs: store.Observation{Kind: "tool", Text: "\n[git_log]\n" + log}}, nil
	}}
}

// writeFile writes a whole file. The edit row carries the diff against
// what the file held (nothing, for a new file).
func writeFile(path, body string) *call {
	return &call{name: "write_file", args: map[string]any{"path": path, "content": body}, run: func(a *agent, n int) (result, error) {
		if err := a.recordEdit(n, "write_file", path, a.e.files[path], body); err != nil {
			return result{}, err
		}
		a.e.files[path] = body
		return result{decision: "wrote " + path, obs: store.Observation{Kind: "write", Target: path,
			Text: fmt.Sprintf("\n[wrote %s] (%d chars)\n", path, utf8.RuneCountInString(body))}}, nil
	}}
}

// editFile changes part of a file the way edit_file does: one search and
// replace, recorded as an edit with its hunk.
func editFile(path, old, new string, change func(string) string) *call {
	return &call{name: "edit_file", args: map[string]any{"path": path, "old": old, "new": new}, run: func(a *agent, n int) (result, error) {
		before := a.e.files[path]
		after := change(before)
		if err := a.recordEdit(n, "edit_file", path, before, after); err != nil {
			return result{}, err
		}
		a.e.files[path] = after
		return result{decision: "edited " + path, obs: store.Observation{Kind: "write", Target: path,
			Text: fmt.Sprintf("\n[edited %s] 1 replacement; the file is now %d lines\n", path, strings.Count(after, "\n"))}}, nil
	}}
}

func (a *agent) recordEdit(n int, tool, path, before, after string) error {
	h, added, removed := hunk(before, after)
	if err := a.e.st.RecordEdit(a.e.ctx, a.id, n, store.Edit{Tool: tool, Path: path, LinesAdded: added, LinesRemoved: removed, Hunk: h}); err != nil {
		return err
	}
	a.e.stampAt(stamp{table: "edits", col: "at", dt: true, where: "run_id = ? AND step = ? AND path = ?", args: []any{num(a.id), n, path}})
	return nil
}

// exec runs a program the policy allows by rule, recorded as a policy
// decision "allow" from source "policy".
func exec(rule string, argv []string, code int, output string, dur time.Duration) *call {
	joined := strings.Join(argv, " ")
	if strings.TrimSpace(output) == "" {
		output = "(no output)\n"
	}
	return &call{name: "exec", args: map[string]any{"program": argv[0], "args": argv[1:]}, dur: dur, run: func(a *agent, n int) (result, error) {
		if err := a.e.st.RecordPolicyEvent(a.e.ctx, store.PolicyEvent{RunID: a.id, Step: n, Kind: store.PolicyDecision, Act: "exec",
			Target: joined, Rule: rule, Layer: "project", Decision: store.PolicyAllow, Source: "policy"}); err != nil {
			return result{}, err
		}
		return result{decision: fmt.Sprintf("exec %s exit %d", argv[0], code), obs: store.Observation{Kind: "tool",
			Text: fmt.Sprintf("\n[exec `%s` exit %d]\n%s", joined, code, output)}}, nil
	}}
}

// shell runs a command line. Gated, it waits for a human first; the
// policy event of the decision is written by the gate.
func shell(line string, code int, output string, dur time.Duration) *call {
	return &call{name: "shell", args: map[string]any{"command": line}, dur: dur, run: func(a *agent, n int) (result, error) {
		return result{decision: fmt.Sprintf("shell exit %d", code), obs: store.Observation{Kind: "tool",
			Text: fmt.Sprintf("\n[shell `%s` exit %d]\n%s", line, code, output)}}, nil
	}}
}

func remember(key, value string) *call {
	return &call{name: "remember", args: map[string]any{"key": key, "value": value}, run: func(a *agent, n int) (result, error) {
		e := a.e
		if _, err := e.st.MemoryPut(e.ctx, e.w.ws, key, value, a.id, n, "fact"); err != nil {
			return result{}, err
		}
		e.stampAt(stamp{table: "memory", col: "created_at", where: "workspace = ? AND key = ?", args: []any{e.w.ws, key}})
		e.stampAt(stamp{table: "memory_snapshots", col: "at", dt: true, where: "run_id = ? AND workspace = ? AND key = ?",
			args: []any{num(a.id), e.w.ws, key}})
		if err := e.st.RecordContextEvent(e.ctx, a.id, n, "memory_write", fmt.Sprintf("%s (%d chars)", key, utf8.RuneCountInString(value)), nil); err != nil {
			return result{}, err
		}
		e.notes = append(e.notes, key+": "+value)
		return result{decision: "remembered " + key, obs: store.Observation{Kind: "tool", Text: "\n[remember " + key + "]\n"}}, nil
	}}
}

// readMessages waits for mail that never comes: children report through
// the tree, not the mailbox, so a parent idling here hears of them at its
// next step.
func readMessages(wait time.Duration) *call {
	secs := int(wait / time.Second)
	return &call{name: "read_messages", args: map[string]any{"wait_secs": secs}, dur: wait, run: func(a *agent, n int) (result, error) {
		if err := a.e.st.RecordAgentEvent(a.e.ctx, store.AgentEvent{RunID: a.id, Step: n, Kind: store.AgentMessageRead, Detail: "0 delivered"}); err != nil {
			return result{}, err
		}
		return result{decision: "waited, nothing arrived", obs: store.Observation{Kind: "message",
			Text: fmt.Sprintf("\n[messages] nothing arrived in %ds; the agents you are waiting on are still running\n", secs)}}, nil
	}}
}

func ask(q, context string, choices ...string) *call {
	args := map[string]any{"question": q, "context": context, "choices": choices}
	return &call{name: "ask_question", args: args, question: &question{text: q, context: context, choices: choices}}
}

func proposePlan(intents ...string) *call {
	var steps []store.PlanStep
	var wire []map[string]any
	for _, in := range intents {
		steps = append(steps, store.PlanStep{Intent: in})
		wire = append(wire, map[string]any{"intent": in})
	}
	return &call{name: "propose_plan", args: map[string]any{"steps": wire}, plan: steps}
}

// spawnSpec is a sub-agent a parent asks for.
type spawnSpec struct {
	as, goal, verifyFile, needle string
	maxSteps                     int
	wait                         bool
	brain                        func(*agent) *turn
}

func (sp spawnSpec) args() map[string]any {
	return map[string]any{"as": sp.as, "goal": sp.goal, "verify_file": sp.verifyFile, "verify_contains": sp.needle,
		"max_steps": sp.maxSteps, "wait": sp.wait}
}

// spawn asks the tree for a child. The tree's caps decide: over the depth
// cap or the agent cap it is refused; otherwise the child starts running
// beside its parent (detached), or the parent waits for its report.
func spawn(sp spawnSpec) *call {
	c := &call{name: "spawn_agent", args: sp.args()}
	c.run = func(a *agent, n int) (result, error) {
		e, t := a.e, a.t
		depth := a.depth + 1
		limit := "" // the cap that refuses it; depth is checked first, as io-harness does
		switch {
		case depth > t.maxDepth:
			limit = "depth"
		case t.agents >= t.maxAgents:
			limit = "agents"
		}
		if limit != "" {
			why := fmt.Sprintf("agent cap reached (%d agents)", t.maxAgents)
			if limit == "depth" {
				why = fmt.Sprintf("depth cap reached (max %d, requested %d)", t.maxDepth, depth)
			}
			if err := e.st.RecordAgentEvent(e.ctx, store.AgentEvent{RunID: a.id, Step: n, Kind: store.AgentSpawnRefused, Detail: limit}); err != nil {
				return result{}, err
			}
			e.logf(a, "step %d: spawn of %s refused (%s)", n, sp.as, limit)
			return result{decision: "spawn refused (" + limit + ")", obs: store.Observation{Kind: "child",
				Text: "\n[spawn refused] " + why + " — adapt or finish with what you have\n"}}, nil
		}
		t.agents++
		id, err := e.st.StartChildRun(e.ctx, sp.goal, e.w.ws, a.id, depth)
		if err != nil {
			return result{}, err
		}
		e.stampAt(stamp{table: "runs", col: "started_at", where: "id = ?", args: []any{num(id)}})
		if err := e.st.RecordAgentEvent(e.ctx, store.AgentEvent{RunID: a.id, Step: n, Kind: store.AgentSpawn, ChildRunID: id,
			Detail: sp.as + ": " + sp.goal}); err != nil {
			return result{}, err
		}
		maxSteps := int64(sp.maxSteps)
		if err := e.st.RecordSpawn(e.ctx, harness.Spawn{ParentRunID: a.id, Step: n, ChildRunID: id, Goal: sp.goal,
			VerifyFile: sp.verifyFile, Needle: sp.needle, MaxSteps: &maxSteps, DenyWrite: "[]", AsName: sp.as}); err != nil {
			return result{}, err
		}
		if err := e.st.RecordAgentEvent(e.ctx, store.AgentEvent{RunID: a.id, Step: n, Kind: store.AgentSpawnArgs, ChildRunID: id,
			Detail: compactJSON(sp.args())}); err != nil {
			return result{}, err
		}
		child := e.newAgent(id, sp.as, a, t, sp.goal, sp.verifyFile, sp.needle, a.prof)
		child.brain = sp.brain
		child.notes = a.notes
		child.wake = e.now + between(child.rng, [2]time.Duration{150 * time.Millisecond, 400 * time.Millisecond})
		t.byName[sp.as] = child
		a.children = append(a.children, child)
		a.inflight++
		e.logf(a, "step %d: spawned %s: %s", n, child.label(), sp.goal)
		if sp.wait {
			return result{}, nil // the decision comes with the child's report
		}
		return result{decision: fmt.Sprintf("child %s (run %s) detached", sp.as, id), obs: store.Observation{Kind: "child",
			Text: fmt.Sprintf("\n[child %s (run %s) %q detached] it is running now; its report reaches you at a later step, and you can reach it at `%s`\n",
				sp.as, id, sp.goal, sp.as)}}, nil
	}
	if sp.wait {
		c.waitChild = true
	}
	return c
}
