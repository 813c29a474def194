// Package agreement checks, for tests, that the explorer and the command
// line tell the same story about a store: every run in the same state,
// with the same counts in both scopes (the agent's own and its whole
// tree's). Each format's tests call Check on a store their own generator
// built, so no generator is copied.
//
// The explorer is driven as a person would drive it: loaded, each run
// opened from the Runs pane with the keyboard, the Runs and Agents panes
// read off the screen. The command line is run as `vigil runs --json` and
// `vigil show ROOT --json`.
package agreement

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/cli"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
	"github.com/vigil-run/vigil/views"
)

// Summary says what a checked store held, so a caller can require the
// shapes it meant to build (a grandchild, requests waiting, several states).
type Summary struct {
	Runs, Roots int
	MaxDepth    int            // 0: roots only; 2: a grandchild
	Waiting     int            // undecided requests in trees
	States      map[string]int // runs by the state the CLI names
}

// run is what the check reads of a run in the CLI's JSON.
type run struct {
	ID           string  `json:"id"`
	ParentID     *string `json:"parent_id"`
	RootID       string  `json:"root_id"`
	State        string  `json:"state"`
	Outcome      *string `json:"outcome"`
	AgentSteps   *int    `json:"agent_steps"`
	AgentTokens  *int64  `json:"agent_tokens"`
	TreeAgents   int     `json:"tree_agents"`
	TreeSteps    *int    `json:"tree_steps"`
	TreeTokens   *int64  `json:"tree_tokens"`
	AgentWaiting int     `json:"agent_waiting"`
	TreeWaiting  int     `json:"tree_waiting"`
}

// String is the run's fields as JSON: runs read twice compare by value.
func (r run) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Check compares the explorer and the CLI on the store at path.
func Check(t testing.TB, path string) Summary {
	t.Helper()
	var runs struct {
		Runs []run `json:"runs"`
	}
	vigil(t, path, &runs, "runs", "--json")
	byID := map[string]run{}
	var roots []run
	for _, r := range runs.Runs {
		byID[r.ID] = r
		if r.RootID == r.ID {
			roots = append(roots, r)
		}
	}
	// Each tree as show lists it, depth first; a tree show cannot print (a
	// run whose journal is damaged) is taken from runs, in no set order.
	trees, ordered := map[string][]run{}, map[string]bool{}
	for _, r := range runs.Runs {
		trees[r.RootID] = append(trees[r.RootID], r)
	}
	for _, root := range roots {
		var show struct {
			Tree []run `json:"tree"`
		}
		if !vigil(t, path, &show, "show", root.ID, "--json") {
			continue
		}
		for _, r := range show.Tree {
			if a, b := r.String(), byID[r.ID].String(); a != b {
				t.Errorf("of run %s vigil show %s says %s, vigil runs %s", r.ID, root.ID, a, b)
			}
		}
		if len(show.Tree) != len(trees[root.ID]) {
			t.Errorf("vigil show %s lists %d runs in the tree, vigil runs %d", root.ID, len(show.Tree), len(trees[root.ID]))
		}
		trees[root.ID], ordered[root.ID] = show.Tree, true
	}

	x := explore(t, path)
	defer x.close()
	rows := x.runRows()
	if len(rows) != len(roots) {
		t.Fatalf("the Runs pane lists %d runs, vigil runs %d roots", len(rows), len(roots))
	}
	sum := Summary{Runs: len(runs.Runs), Roots: len(roots), States: map[string]int{}}
	for i, root := range roots {
		if want := runRow(root); rows[i] != want {
			t.Errorf("Runs pane row %d reads %+v; vigil runs --json says %+v", i, rows[i], want)
		}
		agents := x.openRun(i)
		tree := trees[root.ID]
		if len(agents) != len(tree) {
			t.Errorf("run %s: the Agents pane lists %d agents, vigil show %d", root.ID, len(agents), len(tree))
			continue
		}
		shown := map[string]agentCells{}
		for _, a := range agents {
			shown[a.Run] = a
		}
		for j, r := range tree {
			got := agents[j]
			if !ordered[root.ID] {
				got = shown["#"+store.DisplayID(r.ID)]
			}
			if want := agentRow(r); got != want {
				t.Errorf("run %s, Agents pane row %d reads %+v; vigil --json says %+v", root.ID, j, got, want)
			}
			sum.States[r.State]++
			sum.Waiting += r.AgentWaiting
			sum.MaxDepth = max(sum.MaxDepth, depth(r, byID))
		}
	}
	return sum
}

// vigil runs a command line against the store and decodes its JSON. A
// `runs` that fails fails the check; a `show` that fails (a run whose
// steps cannot be read) is logged and reported false.
func vigil(t testing.TB, path string, into any, args ...string) bool {
	t.Helper()
	var out, errb bytes.Buffer
	args = append(args, "--store", path)
	env := []string{"HOME=" + t.TempDir(), "NO_COLOR=1"}
	if code := cli.RunContext(context.Background(), args, strings.NewReader(""), &out, &errb, env); code != 0 {
		if args[0] == "show" && code == cli.ExitError {
			t.Logf("vigil %s: exit %d: %s", strings.Join(args, " "), code, lastLine(errb.String()))
			return false
		}
		t.Fatalf("vigil %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), into); err != nil {
		t.Fatalf("vigil %s: %v", strings.Join(args, " "), err)
	}
	return true
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func depth(r run, byID map[string]run) int {
	d := 0
	for r.ID != r.RootID && r.ParentID != nil && d <= len(byID) {
		r, d = byID[*r.ParentID], d+1
	}
	return d
}

// runCells is a Runs pane row as drawn: every count is the tree's.
type runCells struct {
	Run, State, Agents, Steps, Tokens string
}

// agentCells is an Agents pane row as drawn: every count is the agent's.
type agentCells struct {
	Run, State, Steps, Tokens, Mark string
}

// runRow is the Runs pane row a root's JSON calls for.
func runRow(r run) runCells {
	label := stateLabel(r)
	if r.TreeWaiting > 0 {
		label += fmt.Sprintf(" ◆%d", r.TreeWaiting)
	}
	c := runCells{Run: "#" + store.DisplayID(r.ID), State: textfmt.Cut(label, 12), Agents: textfmt.Thousands(int64(r.TreeAgents)),
		Steps: "…", Tokens: "…"}
	if r.TreeSteps != nil && r.TreeTokens != nil {
		c.Steps, c.Tokens = textfmt.Thousands(int64(*r.TreeSteps)), textfmt.Tokens(*r.TreeTokens)
	}
	return c
}

// agentRow is the Agents pane row an agent's JSON calls for.
func agentRow(r run) agentCells {
	c := agentCells{Run: "#" + store.DisplayID(r.ID), State: textfmt.Cut(stateLabel(r), 12), Tokens: "…"}
	if r.AgentSteps != nil && r.AgentTokens != nil {
		c.Steps, c.Tokens = textfmt.Thousands(int64(*r.AgentSteps))+" st", textfmt.Tokens(*r.AgentTokens)
	}
	switch {
	case r.AgentWaiting > 0:
		c.Mark = fmt.Sprintf("◆%d", r.AgentWaiting)
	case r.TreeWaiting > 0:
		c.Mark = "◆"
	}
	return c
}

// stateLabel is how the panes word a state the CLI names.
func stateLabel(r run) string {
	outcome := ""
	if r.Outcome != nil {
		outcome = *r.Outcome
	}
	for st := store.StateRunning; st <= store.StateUnknown; st++ {
		name := st.String()
		if st == store.StateUnknown {
			name = "unknown"
		}
		if name == r.State {
			return views.StateLabel(st, store.Outcome(outcome))
		}
	}
	return "?" + r.State
}

// explorer is the explorer model, driven synchronously as the Bubble Tea
// runtime would drive it; a command that does not answer within wait is a
// timer (there is no clock tick and no watcher) and is dropped.
type explorer struct {
	t   testing.TB
	m   *tui.Model
	src store.Source
}

const wait = 5 * time.Second

// The panes are read at a size where every column is shown.
const paneW, paneH = 200, 60

func explore(t testing.TB, path string) *explorer {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	x := &explorer{t: t, src: src, m: tui.New(tui.Options{Source: src, NoWatch: true, NoTick: true, NoColor: true})}
	x.m.Settle(tea.WindowSizeMsg{Width: 250, Height: 70}, wait)
	x.m.RunCmd(x.m.Init(), wait)
	return x
}

func (x *explorer) close() {
	x.m.Close()
	x.m.Source().Close()
}

func (x *explorer) press(keys ...string) {
	for _, k := range keys {
		code := []rune(k)[0]
		if k == "enter" {
			code = tea.KeyEnter
		}
		x.m.Settle(tea.KeyPressMsg{Code: code, Text: strings.TrimPrefix(k, "enter")}, wait)
	}
}

// pane is one pane's inner lines (borders cut off), as plain text.
func (x *explorer) pane(i int) []string {
	lines := strings.Split(ansi.Strip(x.m.RenderPane(i, paneW, paneH)), "\n")
	var out []string
	for _, l := range lines[1 : len(lines)-1] {
		out = append(out, ansi.Cut(l, 1, paneW-1))
	}
	return out
}

// runRows reads the Runs pane, top to bottom. Cells are found from the
// header: a left-aligned column starts at its title, a right-aligned one
// ends where its title does.
func (x *explorer) runRows() []runCells {
	lines := x.pane(0)
	head := lines[0]
	at := func(title string) int {
		i := strings.Index(head, " "+title+" ")
		if i < 0 {
			x.t.Fatalf("the Runs pane has no %s column: %q", title, head)
		}
		return i + 1
	}
	end := func(title string) int { return at(title) + len(title) }
	state, runCol, goal := at("STATE"), at("RUN"), at("GOAL")
	lastWord := func(l string, to int) string {
		f := strings.Fields(ansi.Cut(l, 0, to))
		if len(f) == 0 {
			return ""
		}
		return f[len(f)-1]
	}
	var rows []runCells
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		rows = append(rows, runCells{
			Run:    strings.TrimSpace(ansi.Cut(l, runCol, goal)),
			State:  strings.TrimSpace(ansi.Cut(l, state, runCol)),
			Agents: lastWord(l, end("AGENTS")),
			Steps:  lastWord(l, end("STEPS")),
			Tokens: lastWord(l, end("TOKENS")),
		})
	}
	return rows
}

// openRun opens the i-th run of the Runs pane with the keyboard and reads
// the Agents pane.
func (x *explorer) openRun(i int) []agentCells {
	x.press("1", "g")
	for range i {
		x.press("j")
	}
	x.press("enter")
	// The right-hand columns, one space apart, end the line: state 12,
	// steps 7, tokens 6, the waiting mark 3.
	const w = paneW - 2
	cell := func(l string, from, to int) string { return strings.TrimSpace(ansi.Cut(l, from, to)) }
	var rows []agentCells
	for _, l := range x.pane(1) {
		id := strings.Index(l, "#")
		if id < 0 || strings.Contains(l, views.AgentScope) {
			continue // the header, a spawn refusal, the blank rest
		}
		rest := ansi.Cut(l, ansi.StringWidth(l[:id]), w)
		rows = append(rows, agentCells{
			Run:    strings.Fields(rest)[0],
			State:  cell(l, w-31, w-19),
			Steps:  cell(l, w-18, w-11),
			Tokens: cell(l, w-10, w-4),
			Mark:   cell(l, w-3, w),
		})
	}
	return rows
}
