package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// twoRuns writes two runs of one task whose prompts grow with the
// observations, as io-harness assembles them: long prompts that differ in
// one observation line at step 3, and a result that differs there too.
func twoRuns(t *testing.T) (path, a, b string) {
	t.Helper()
	path = fixtureStore(t)
	w := writer(t, path)
	ctx := context.Background()
	var ids []string
	for run, exit := range []string{"exit 0", "exit 1"} {
		id, err := w.StartRun(ctx, "Fix the build", "/work/shop")
		if err != nil {
			t.Fatal(err)
		}
		var obs strings.Builder
		for n := 1; n <= 4; n++ {
			var prompt strings.Builder
			prompt.WriteString("Goal: fix the build\nConstraints: (none)\n\nObservations so far (results of your tool calls):\n")
			prompt.WriteString(obs.String())
			for i := 0; i < 30; i++ {
				fmt.Fprintf(&prompt, "policy line %02d: the same in both runs\n", i)
			}
			prompt.WriteString("\nCall a tool to make progress toward the success criterion.")
			decision, result := fmt.Sprintf("read file %d", n), fmt.Sprintf("[read file %d]\nline one\nline two", n)
			if n == 3 {
				decision = "ran go test ./... (" + exit + ")"
				result = "[go test]\nok   parse\nok   lex\n--- FAIL: TestRound (" + exit + ")\nok   emit"
			}
			if err := w.CheckpointStep(ctx, id, twin.StepRecord{Step: n, Decision: decision, Result: result,
				Prompt: prompt.String(), ToolCall: fmt.Sprintf(`read_file:{"n":%d}`, n), Tokens: int64(100 * n)}); err != nil {
				t.Fatal(err)
			}
			obs.WriteString(result + "\n")
		}
		_ = run
		ids = append(ids, id)
	}
	return path, ids[0], ids[1]
}

// diff aligns prompts and results by line inside the field (the step's
// prompt is not printed whole), exits 1 when the runs differ as diff(1)
// does, and --fields compares only the fields named.
func TestDiffLines(t *testing.T) {
	t.Parallel()
	p, a, b := twoRuns(t)
	h := newHarness(t)
	var out strings.Builder
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"every field", ExitError, []string{"diff", a, b}},
		{"the decisions and results only", ExitError, []string{"diff", a, b, "--fields", "decision,result"}},
		{"tokens only: the same", ExitOK, []string{"diff", a, b, "--fields", "tokens"}},
		{"a run against itself", ExitOK, []string{"diff", a, a}},
	} {
		r := h.run(append(c.args, "--store", p)...)
		r.wantCode(t, c.code)
		if r.stderr != "" {
			t.Errorf("%s: stderr %q", c.name, r.stderr)
		}
		fmt.Fprintf(&out, "== %s\n$ vigil %s\nexit %d\n%s", c.name, strings.Join(c.args, " "), r.code, r.stdout)
	}
	golden.RequireEqual(t, out.String())

	r := h.run("diff", a, b, "--store", p)
	// The prompts: a hunk around the one observation that differs, never
	// the 30 lines both share whole.
	if n := strings.Count(r.stdout, "policy line"); n > 2*2*diffContext {
		t.Errorf("the shared prompt lines are printed %d times:\n%s", n, r.stdout)
	}
	contains(t, r.stdout, "  prompt @@ ", "- --- FAIL: TestRound (exit 0)\n", "+ --- FAIL: TestRound (exit 1)\n",
		"  result @@ -1,5 +1,5 @@\n")
	bad := h.run("diff", a, b, "--fields", "decison", "--store", p)
	bad.wantCode(t, ExitUsage)
	bad.oneLine(t, `unknown field "decison" for --fields`)
}
