package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// shown is everything show prints about one run.
type shown struct {
	snap     *snapshot
	run      store.Run
	tree     []string // the run and every run under it, depth first
	steps    []store.Step
	samples  []store.ContextSample
	requests []store.Request // open requests of the tree
}

func noSuchRun(src store.Source, id string) error {
	return store.Errorf(src.Path(), store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
}

func (a *app) loadShown(ctx context.Context, src store.Source, id string) (*shown, error) {
	snap, err := loadSnapshot(ctx, src, a.now())
	if err != nil {
		return nil, err
	}
	run, ok := snap.byID[id]
	if !ok {
		return nil, noSuchRun(src, id)
	}
	sh := &shown{snap: snap, run: run, tree: snap.subtree(id)}
	if sh.steps, err = src.Steps(ctx, id); err != nil {
		return nil, err
	}
	if sh.samples, err = src.ContextSamples(ctx, id); err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, t := range sh.tree {
		in[t] = true
	}
	for _, q := range snap.open {
		if in[q.RunID] {
			sh.requests = append(sh.requests, q)
		}
	}
	return sh, nil
}

func (a *app) show(ctx context.Context, s *session, id string, asJSON, markdown bool) error {
	sh, err := a.loadShown(ctx, s.src, id)
	if err != nil {
		return err
	}
	switch {
	case asJSON:
		return writeJSON(a.stdout, sh.json())
	case markdown:
		a.showMarkdown(a.stdout, sh)
	default:
		a.showText(a.stdout, sh)
	}
	return nil
}

func (sh *shown) json() jsonShow {
	snap := sh.snap
	out := jsonShow{Store: storeJSON(snap.src), At: jsonTime(snap.now), Run: snap.runJSON(sh.run),
		Ancestry: snap.ancestry(sh.run.ID), Tree: []jsonRun{}, Steps: []jsonStep{}, Context: []jsonSample{},
		Requests: []jsonRequest{}}
	for _, id := range sh.tree {
		out.Tree = append(out.Tree, snap.runJSON(snap.byID[id]))
	}
	for _, st := range sh.steps {
		out.Steps = append(out.Steps, stepJSON(st))
	}
	for _, c := range sh.samples {
		out.Context = append(out.Context, sampleJSON(c))
	}
	d := views.ComputeDrift(sh.samples)
	out.Drift = jsonDrift{Turns: d.Turns, Missing: d.Missing, Estimated: d.SumEst, Reported: d.SumReported, Gap: d.SumGap}
	if d.SumReported != 0 {
		out.Drift.Cumulative = ptr(d.Cumulative)
	}
	for _, q := range sh.requests {
		out.Requests = append(out.Requests, snap.requestJSON(q))
	}
	return out
}

// treeLines draws the tree: each run id with its branch prefix.
func (sh *shown) treeLines() [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	var walk func(id, prefix, branch string)
	walk = func(id, prefix, branch string) {
		if seen[id] {
			return
		}
		seen[id] = true
		out = append(out, [2]string{id, prefix + branch})
		kids := sh.snap.children[id]
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, k := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(k, next, b)
		}
	}
	walk(sh.run.ID, "", "")
	return out
}

// leaseLine says who drives the run, in words.
func (a *app) leaseLine(snap *snapshot, r store.Run, rs runState) string {
	if !snap.src.RecordsLeases() {
		return "the store records no leases"
	}
	l := rs.lease
	if l == nil && r.LeaselessDriver {
		return "no lease: resumed with a decision, which takes none, so nothing says whether its driver still runs"
	}
	if l == nil {
		return "no lease: nobody drives it"
	}
	who := "lease"
	if rs.heldBy != "" && rs.heldBy != r.ID {
		who = "lease of run " + clean(rs.heldBy)
	}
	pid := ""
	if p := l.OwnerPID(); p > 0 {
		pid = fmt.Sprintf(", pid %d", p)
	}
	line := fmt.Sprintf("%s %s%s, renewed %s, ttl %s", rs.liveness, who, pid, a.fmtTime(l.RenewedAt), views.Duration(l.TTL))
	if _, note := store.OwnerCheck(*l); note != "" {
		line += "; " + clean(note)
	}
	return line
}

func (a *app) showText(w io.Writer, sh *shown) {
	snap, r := sh.snap, sh.run
	rs := snap.stateOf(r)
	fmt.Fprintf(w, "run %s  %s\n", clean(r.ID), clean(r.Goal))
	kv := &table{}
	kv.add("state", stateName(rs.state)+" ("+a.leaseLine(snap, r, rs)+")")
	kv.add("status", orDash(clean(string(r.Status))))
	kv.add("outcome", orDash(clean(string(r.Outcome))))
	if !r.IsRoot() {
		kv.add("parent", clean(r.ParentID)+" (tree "+clean(strings.Join(snap.ancestry(r.ID), " › "))+")")
	}
	kv.add("depth", strconv.Itoa(r.Depth))
	if rec := r.Recovery; rec != nil {
		kv.add("recovery", fmt.Sprintf("tool call %s at step %d (attempt %s, started %s) never finished; a resume waits for a decision: retry, completed or abort",
			clean(rec.Tool), rec.Step, clean(rec.AttemptID), a.fmtTime(rec.StartedAt)))
	}
	kv.add("started", a.fmtTime(r.StartedAt))
	if r.Summary != nil {
		kv.add("finished", a.fmtTime(r.Summary.FinishedAt))
	}
	if d, ok := snap.duration(r, rs.state); ok {
		kv.add("duration", views.Duration(d))
	}
	if r.StatsKnown {
		kv.add("steps", strconv.Itoa(r.Steps))
		kv.add("tokens", views.Thousands(r.Tokens))
	}
	if r.Provider != "" {
		kv.add("provider", clean(r.Provider))
	}
	if r.Workspace != "" {
		kv.add("workspace", clean(r.Workspace))
	}
	kv.write(w, "  ")

	if len(sh.tree) > 1 {
		fmt.Fprintf(w, "\ntree (%d agents)\n", len(sh.tree))
		t := &table{header: []string{"AGENT", "STATE", "STEPS", "TOKENS", "WAITING", "GOAL"}, right: map[int]bool{2: true, 3: true, 4: true}}
		for _, l := range sh.treeLines() {
			cr := snap.byID[l[0]]
			crs := snap.stateOf(cr)
			steps, tokens := "-", "-"
			if cr.StatsKnown {
				steps, tokens = strconv.Itoa(cr.Steps), views.Tokens(cr.Tokens)
			}
			waiting := ""
			if n := snap.waiting[cr.ID]; n > 0 {
				waiting = strconv.Itoa(n)
			}
			t.add(l[1]+clean(cr.ID), stateName(crs.state), steps, tokens, waiting, cleanCut(cr.Goal, goalWidth))
		}
		t.write(w, "  ")
	}

	fmt.Fprintf(w, "\nsteps (%d)\n", len(sh.steps))
	if len(sh.steps) > 0 {
		t := &table{header: []string{"STEP", "DECISION", "TOOL CALL", "TOKENS", "RETRIES"}, right: map[int]bool{0: true, 3: true}}
		for _, st := range sh.steps {
			dec := cleanCut(st.Decision, 56)
			if st.Pending {
				dec = "(pending) " + dec
			}
			retries := ""
			if n := len(st.Retries); n > 0 {
				retries = strconv.Itoa(n)
			}
			t.add(strconv.Itoa(st.Number), dec, cleanCut(st.ToolCall, 56), views.Thousands(st.Tokens), retries)
		}
		t.write(w, "  ")
	}

	d := views.ComputeDrift(sh.samples)
	head := fmt.Sprintf("\ncontext (%d turns", d.Turns)
	if d.Missing > 0 {
		head += fmt.Sprintf(", %d not reported", d.Missing)
	}
	if d.SumReported != 0 {
		head += ", cumulative drift " + views.Percent(d.Cumulative)
	}
	fmt.Fprintln(w, head+")")
	if len(sh.samples) > 0 {
		t := &table{header: []string{"STEP", "ESTIMATE", "REPORTED", "GAP", "DRIFT"}, right: map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true}}
		for _, c := range sh.samples {
			t.add(sampleCells(c, "missing")...)
		}
		t.write(w, "  ")
	}

	fmt.Fprintf(w, "\nopen requests (%d)\n", len(sh.requests))
	for _, q := range sh.requests {
		a.requestText(w, snap, q)
	}
}

// requestText prints one request: its key and where it waits, then what it
// asks, indented.
func (a *app) requestText(w io.Writer, snap *snapshot, q store.Request) {
	d, why := snap.classify(q)
	del := deliveryName(d)
	if why != "" {
		del += ": " + clean(why)
	}
	fmt.Fprintf(w, "  %s  run %s, step %d  [%s]\n", clean(requestKey(q.Key())), clean(q.RunID), q.Step, del)
	switch q.Kind {
	case store.Approval:
		size := ""
		if q.HasContent {
			size = fmt.Sprintf(" (%s bytes)", views.Thousands(q.ContentBytes))
		}
		fmt.Fprintf(w, "    %s %s%s\n", clean(q.Act), clean(q.Target), size)
	case store.Question:
		fmt.Fprintf(w, "    %s\n", clean(q.Question))
		if q.Context != "" {
			fmt.Fprintf(w, "    context: %s\n", clean(q.Context))
		}
		if len(q.Choices) > 0 {
			cs := make([]string, len(q.Choices))
			for i, c := range q.Choices {
				cs[i] = clean(c)
			}
			fmt.Fprintf(w, "    choices: %s\n", strings.Join(cs, " | "))
		}
	case store.Plan:
		for i, p := range q.PlanSteps {
			agent := ""
			if p.Agent != "" {
				agent = " (" + clean(p.Agent) + ")"
			}
			fmt.Fprintf(w, "    %d. %s%s\n", i+1, clean(p.Intent), agent)
		}
	}
}

// Markdown.

// mdCell makes text safe inside a table cell.
func mdCell(s string) string {
	s = sanitize.Line(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	if s == "" {
		return " "
	}
	return s
}

// mdCode is inline code that holds any text; in a table cell a pipe must
// be escaped even inside code.
func mdCode(s string, cell bool) string {
	s = sanitize.Line(s)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// mdFence is a fenced block that holds any text.
func mdFence(w io.Writer, s string) {
	s = sanitize.Text(s)
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	fmt.Fprintf(w, "%stext\n%s\n%s\n", fence, strings.TrimRight(s, "\n"), fence)
}

func mdTable(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

func (a *app) showMarkdown(w io.Writer, sh *shown) {
	snap, r := sh.snap, sh.run
	rs := snap.stateOf(r)
	fmt.Fprintf(w, "# Run %s: %s\n\n", clean(r.ID), clean(r.Goal))
	var rows [][]string
	add := func(k, v string) { rows = append(rows, []string{k, v}) }
	add("State", mdCell(stateName(rs.state)+" ("+a.leaseLine(snap, r, rs)+")"))
	add("Status", mdCell(orDash(string(r.Status))))
	add("Outcome", mdCell(orDash(string(r.Outcome))))
	if !r.IsRoot() {
		add("Parent", mdCell(r.ParentID))
		add("Ancestry", mdCell(strings.Join(snap.ancestry(r.ID), " › ")))
	}
	add("Depth", strconv.Itoa(r.Depth))
	if rec := r.Recovery; rec != nil {
		add("Recovery", mdCell(fmt.Sprintf("tool call %s at step %d (attempt %s) never finished; a resume waits for a decision: retry, completed or abort",
			rec.Tool, rec.Step, rec.AttemptID)))
	}
	add("Started", a.fmtTime(r.StartedAt))
	if r.Summary != nil {
		add("Finished", a.fmtTime(r.Summary.FinishedAt))
	}
	if d, ok := snap.duration(r, rs.state); ok {
		add("Duration", views.Duration(d))
	}
	if r.StatsKnown {
		add("Steps", strconv.Itoa(r.Steps))
		add("Tokens", views.Thousands(r.Tokens))
	}
	if r.Provider != "" {
		add("Provider", mdCell(r.Provider))
	}
	if r.Workspace != "" {
		add("Workspace", mdCode(r.Workspace, true))
	}
	add("Store", mdCode(snap.src.Path(), true))
	mdTable(w, []string{"Field", "Value"}, rows)

	fmt.Fprintf(w, "## Tree\n\n")
	rows = nil
	for _, l := range sh.treeLines() {
		cr := snap.byID[l[0]]
		steps, tokens := "-", "-"
		if cr.StatsKnown {
			steps, tokens = strconv.Itoa(cr.Steps), views.Thousands(cr.Tokens)
		}
		rows = append(rows, []string{l[1] + mdCell(cr.ID), strconv.Itoa(cr.Depth), stateName(snap.stateOf(cr).state),
			steps, tokens, strconv.Itoa(snap.waiting[cr.ID]), mdCell(cr.Goal)})
	}
	mdTable(w, []string{"Agent", "Depth", "State", "Steps", "Tokens", "Waiting", "Goal"}, rows)

	fmt.Fprintf(w, "## Steps\n\n")
	if len(sh.steps) == 0 {
		fmt.Fprintf(w, "No steps yet.\n\n")
	} else {
		rows = nil
		for _, st := range sh.steps {
			dec := mdCell(st.Decision)
			if st.Pending {
				dec = "*(pending)* " + dec
			}
			var retries []string
			for _, rt := range st.Retries {
				retries = append(retries, mdCell(rt.Decision))
			}
			rows = append(rows, []string{strconv.Itoa(st.Number), dec, mdCode(st.ToolCall, true), views.Thousands(st.Tokens),
				strings.Join(retries, "<br>")})
		}
		mdTable(w, []string{"Step", "Decision", "Tool call", "Tokens", "Retries"}, rows)
	}

	fmt.Fprintf(w, "## Context\n\n")
	d := views.ComputeDrift(sh.samples)
	if len(sh.samples) == 0 {
		fmt.Fprintf(w, "No context samples.\n\n")
	} else {
		fmt.Fprintf(w, "%d turns, %d not reported by the provider", d.Turns, d.Missing)
		if d.SumReported != 0 {
			fmt.Fprintf(w, "; cumulative drift %s (reported minus estimate, over reported)", views.Percent(d.Cumulative))
		}
		fmt.Fprintf(w, ".\n\n")
		rows = nil
		for _, c := range sh.samples {
			rows = append(rows, sampleCells(c, "*missing*"))
		}
		mdTable(w, []string{"Step", "Estimate", "Reported", "Gap", "Drift"}, rows)
	}

	fmt.Fprintf(w, "## Open requests\n\n")
	if len(sh.requests) == 0 {
		fmt.Fprintf(w, "None.\n")
	}
	for _, q := range sh.requests {
		dl, why := snap.classify(q)
		fmt.Fprintf(w, "### %s\n\n", requestKey(q.Key()))
		fmt.Fprintf(w, "Run %s, step %d. Delivery: %s", clean(q.RunID), q.Step, deliveryName(dl))
		if why != "" {
			fmt.Fprintf(w, " (%s)", clean(why))
		}
		fmt.Fprintf(w, ".\n\n")
		switch q.Kind {
		case store.Approval:
			fmt.Fprintf(w, "%s %s\n\n", mdCell(q.Act), mdCode(q.Target, false))
			if q.HasContent {
				if int64(len(q.Content)) < q.ContentBytes {
					fmt.Fprintf(w, "Content (first %s of %s bytes):\n\n", views.Thousands(int64(len(q.Content))), views.Thousands(q.ContentBytes))
				}
				mdFence(w, q.Content)
				fmt.Fprintln(w)
			}
		case store.Question:
			fmt.Fprintf(w, "> %s\n\n", clean(q.Question))
			if q.Context != "" {
				mdFence(w, q.Context)
				fmt.Fprintln(w)
			}
			for _, c := range q.Choices {
				fmt.Fprintf(w, "- %s\n", clean(c))
			}
			if len(q.Choices) > 0 {
				fmt.Fprintln(w)
			}
		case store.Plan:
			for i, p := range q.PlanSteps {
				agent := ""
				if p.Agent != "" {
					agent = " (" + clean(p.Agent) + ")"
				}
				fmt.Fprintf(w, "%d. %s%s\n", i+1, clean(p.Intent), agent)
			}
			fmt.Fprintln(w)
		}
	}
}

// signed writes a count with its sign and thousands separators: +1,200.
func signed(n int64) string {
	if n >= 0 {
		return "+" + views.Thousands(n)
	}
	return views.Thousands(n)
}

// sampleCells is a context sample as table cells: step, estimate (a dash
// where the store has none), reported (missing where the provider gave
// none), gap and drift.
func sampleCells(c store.ContextSample, missing string) []string {
	j := sampleJSON(c)
	est, rep, gap, drift := "–", missing, "", ""
	if j.Estimated != nil {
		est = views.Thousands(*j.Estimated)
	}
	if j.Reported != nil {
		rep = views.Thousands(*j.Reported)
	}
	if j.Gap != nil {
		gap = signed(*j.Gap)
	}
	if j.Drift != nil {
		drift = views.Percent(*j.Drift)
	}
	return []string{strconv.Itoa(c.Step), est, rep, gap, drift}
}
