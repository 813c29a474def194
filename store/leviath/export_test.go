package leviath

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BuildFixture writes the fixture runs directory under dir and returns its
// path, for the package's external tests (the explorer-and-CLI agreement
// check), which cannot reach the generator.
func BuildFixture(t testing.TB, dir string) string { return buildFixture(t, dir).runs }

// BuildHostile writes a runs directory with a run and a child per string,
// the string in every text they carry: task, workdir, title, error, every
// transcript entry (user message, assistant turn and its tool call, tool
// result), a Message record, a status change and the prompt a waiting run
// asks (interactions.json). It returns the runs directory.
func BuildHostile(t testing.TB, dir string, corpus []string) string {
	t.Helper()
	runs := filepath.Join(dir, "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, s := range corpus {
		at := t0 + int64(i)*100
		id := fmt.Sprintf("hostile-%d-%012x", at, i)
		kid := fmt.Sprintf("hostile-child-%d-%012x", at+1, i)
		m := baseMeta(id, "hostile", s, at)
		m.workdir, m.title = s, &s
		m.children = []string{kid}
		r := newGenRun(t, runs, m, i%2 == 0, stdRegions(s)...)
		r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.toolCalls = 1, 100, 10, 1
		r.progress(at+10, r.appendD("conversation", userE(s), turnE(s, genCall{fmt.Sprintf("toolu_%d", i), "bash", args("command", s)}),
			resultE(fmt.Sprintf("toolu_%d", i), "bash", s, i%3 == 0)))
		r.record("Message", ordered{{"message", ordered{{"role", "user"}, {"content", s}}}, {"at", at + 11}})
		switch i % 3 {
		case 0:
			r.meta.status = "waiting_input"
			r.progress(at+20, r.appendD("conversation", turnE(s, genCall{"toolu_ask", "ask_user_confirm", args("question", s)})))
			side := ordered{{"plan_approval", ordered{{"cursor", 3}, {"round", 1}, {"body", s}, {"choices", []string{s, "abort"}}}}}
			b, _ := json.MarshalIndent(side, "", "  ")
			if err := os.WriteFile(filepath.Join(r.dir, "interactions.json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
		case 1:
			r.meta.errText = &s
			r.status(at+20, "error")
		default:
			r.status(at+20, "complete")
		}
		c := baseMeta(kid, "hostile-child", s, at+1)
		c.parent, c.depth = id, 1
		k := newGenRun(t, runs, c, true, stdRegions(s)...)
		k.progress(at+12, k.appendD("conversation", turnE(s)))
		k.status(at+13, "complete")
	}
	return runs
}
