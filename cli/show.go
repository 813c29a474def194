package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// shown is everything show prints about one run.
type shown struct {
	rd        *reading
	id        string
	run       store.Run
	tree      []string // the run and every run under it, depth first
	steps     []store.Step
	details   map[int64]*store.StepDetail // each step's detail, by its row (JSON only; see detail)
	src       store.Source                // where a detail not in details is read, one step at a time
	ctx       context.Context
	detailErr error
	samples   []store.ContextSample
	requests  []store.Request // open requests of the tree
	decided   []store.DecisionRecord
	policy    []store.PolicyEvent // every policy event of the run (show_policy.go)
}

func noSuchRun(src store.Source, id string) error {
	return store.Errorf(src.Path(), store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
}

func (a *app) loadShown(ctx context.Context, src store.Source, id string) (*shown, error) {
	rd, err := a.read(ctx, src)
	if err != nil {
		return nil, err
	}
	run, ok := rd.md.Run(id)
	if !ok {
		return nil, noSuchRun(src, id)
	}
	sh := &shown{rd: rd, id: id, run: run, tree: rd.md.Subtree(id)}
	if sh.steps, err = src.Steps(ctx, id); err != nil {
		return nil, err
	}
	if sh.samples, err = src.ContextSamples(ctx, id); err != nil {
		return nil, err
	}
	if err := sh.loadPolicy(ctx, src); err != nil {
		return nil, err
	}
	sh.requests = rd.openRequests(func(runID string) bool { return rd.md.Within(runID, id) })
	if sh.decided, err = store.Decisions(ctx, src, sh.tree...); err != nil {
		return nil, err
	}
	a.nameDeciders(src, sh.decided)
	return sh, nil
}

func (a *app) show(ctx context.Context, s *session, id string, asJSON, markdown bool) error {
	sh, err := a.loadShown(ctx, s.src, id)
	s.warn(err) // the run's own damage is the error, not a warning too
	if err != nil {
		return err
	}
	switch {
	case asJSON:
		if err := sh.loadDetails(ctx, s.src); err != nil {
			return err
		}
		if err := sh.writeJSON(a.stdout); err != nil {
			return err
		}
		return sh.detailErr
	case markdown:
		a.showMarkdown(a.out(), sh)
	default:
		a.showText(a.out(), sh)
	}
	return nil
}

func (sh *shown) json() jsonShow {
	rd := sh.rd
	out := jsonShow{Store: storeJSON(rd.src), At: jsonTime(rd.now), Run: rd.runJSON(sh.id),
		Ancestry: rd.md.Ancestry(sh.id), Tree: []jsonRun{}, Steps: []jsonStep{}, Context: []jsonSample{},
		Requests: []jsonRequest{}}
	for _, id := range sh.tree {
		out.Tree = append(out.Tree, rd.runJSON(id))
	}
	for _, st := range sh.steps {
		out.Steps = append(out.Steps, stepJSON(st, sh.detail(st)))
	}
	for _, c := range sh.samples {
		out.Context = append(out.Context, sampleJSON(c))
	}
	out.Drift = sh.drift()
	for _, q := range sh.requests {
		out.Requests = append(out.Requests, rd.requestJSON(q))
	}
	out.Decisions = []jsonDecision{}
	for _, d := range sh.decided {
		out.Decisions = append(out.Decisions, rd.decisionJSON(d))
	}
	out.PolicyEvents = sh.policyJSON()
	return out
}

// writeJSON writes sh.json(), a tree member and a step at a time.
func (sh *shown) writeJSON(w io.Writer) error {
	rd := sh.rd
	d := newJSONDoc(w)
	d.field("store", storeJSON(rd.src))
	d.field("at", jsonTime(rd.now))
	d.field("run", rd.runJSON(sh.id))
	d.field("ancestry", rd.md.Ancestry(sh.id))
	d.runList("tree", len(sh.tree), func(i int, j *jsonRun, sc *runScratch) { rd.fillRunJSON(j, sh.tree[i], sc) })
	d.list("steps", len(sh.steps), func(i int) any { return stepJSON(sh.steps[i], sh.detail(sh.steps[i])) })
	d.list("context", len(sh.samples), func(i int) any { return sampleJSON(sh.samples[i]) })
	d.field("drift", sh.drift())
	d.list("requests", len(sh.requests), func(i int) any { return rd.requestJSON(sh.requests[i]) })
	d.list("decisions", len(sh.decided), func(i int) any { return rd.decisionJSON(sh.decided[i]) })
	d.field("policy_events", sh.policyJSON())
	return d.close()
}

func (sh *shown) drift() jsonDrift {
	d := runmodel.ComputeDrift(sh.samples)
	out := jsonDrift{Turns: d.Turns, Missing: d.Missing, Estimated: d.SumEst, Reported: d.SumReported, Gap: d.SumGap}
	if d.SumReported != 0 {
		out.Cumulative = ptr(d.Cumulative)
	}
	return out
}

// loadDetails readies every step's detail: in one pass where the source
// can (DetailReader); else each is read as its step is written (detail), so
// a run of many long steps is never held whole (a 1 GB Leviath journal).
func (sh *shown) loadDetails(ctx context.Context, src store.Source) error {
	sh.ctx, sh.src = ctx, src
	if !src.Capabilities().Has(store.CapDetails) {
		return nil
	}
	ds, err := src.StepDetails(ctx, sh.id)
	if err != nil {
		return err
	}
	sh.details = make(map[int64]*store.StepDetail, len(ds))
	for i := range ds {
		sh.details[ds[i].RowID] = &ds[i]
	}
	return nil
}

// detail is st's detail: from loadDetails' pass, or read now. A read that
// fails leaves the step without its detail and is reported once the JSON
// is written (detailErr).
func (sh *shown) detail(st store.Step) *store.StepDetail {
	if d, ok := sh.details[st.RowID]; ok || sh.src == nil || sh.detailErr != nil {
		return d
	}
	d, err := sh.src.StepDetail(sh.ctx, sh.id, st.RowID)
	if err != nil {
		sh.detailErr = err
		return nil
	}
	return &d
}

// guideLevels bounds the drawing in front of an agent: a deeper one keeps
// its last levels after a ⋯, so a chain thousands deep costs each line a
// few cells, not thousands.
const guideLevels = 16

// treeLines draws the tree: each run id with its branch prefix, parents
// before children. It keeps its own stack, not Go's: a chain of sub-agents
// can be as deep as the store is long.
func (sh *shown) treeLines() [][2]string {
	type at struct {
		id, prefix, branch string
		deep               bool // levels were dropped from the front of prefix
	}
	out := make([][2]string, 0, len(sh.tree))
	stack := []at{{id: sh.id}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		guide := n.prefix + n.branch
		if n.deep {
			guide = "⋯" + guide
		}
		out = append(out, [2]string{n.id, guide})
		next, deep := n.prefix, n.deep
		switch n.branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		if utf8.RuneCountInString(next) > 3*guideLevels {
			_, size := utf8.DecodeRuneInString(next)
			next, deep = next[size+2:], true // a level is one rune and two spaces
		}
		kids := sh.rd.md.Children(n.id)
		for i := len(kids) - 1; i >= 0; i-- {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			stack = append(stack, at{kids[i], next, b, deep})
		}
	}
	return out
}

// leaseLine says who drives the run, in words.
func (a *app) leaseLine(rd *reading, id string) string {
	if !rd.md.RecordsLeases() {
		return "the store records no leases"
	}
	l, heldBy := rd.md.Lease(id)
	if r, _ := rd.md.Run(id); l == nil && r.LeaselessDriver {
		return "no lease: resumed with a decision, which takes none, so nothing says whether its driver still runs"
	}
	if l == nil {
		return "no lease: nobody drives it"
	}
	who := "lease"
	if heldBy != "" && heldBy != id {
		who = "lease of run " + clean(heldBy)
	}
	pid := ""
	if p := l.OwnerPID(); p > 0 {
		pid = fmt.Sprintf(", pid %d", p)
	}
	line := fmt.Sprintf("%s %s%s, renewed %s, ttl %s", rd.md.Liveness(id, rd.now), who, pid, a.fmtTime(l.RenewedAt), textfmt.Duration(l.TTL))
	if _, note := store.OwnerCheck(*l); note != "" {
		line += "; " + clean(note)
	}
	return line
}

// ownCounts says the scope of the tree table's counts.
const ownCounts = "steps, tokens and waiting requests are each agent's own"

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// countsLine is one count in both scopes, for the run's fields: "agent 4,
// tree 10".
func countsLine(agent, tree string) string { return "agent " + agent + ", tree " + tree }

func (a *app) showText(w io.Writer, sh *shown) {
	rd, md, r := sh.rd, sh.rd.md, sh.run
	fmt.Fprintf(w, "run %s  %s\n", clean(r.ID), clean(r.Goal))
	kv := &table{}
	kv.add("state", stateName(md.State(sh.id, rd.now))+" ("+a.leaseLine(rd, sh.id)+")")
	kv.add("status", orDash(clean(string(r.Status))))
	kv.add("outcome", orDash(clean(string(r.Outcome))))
	if !r.IsRoot() {
		kv.add("parent", clean(r.ParentID)+" (tree "+clean(strings.Join(md.Ancestry(sh.id), " › "))+")")
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
	if d, ok := md.Duration(sh.id, rd.now); ok {
		kv.add("duration", textfmt.Duration(d))
	}
	agent, tree := md.Agent(sh.id), md.Tree(sh.id)
	kv.add("steps", countsLine(stepsText(agent), stepsText(tree)))
	kv.add("tokens", countsLine(tokensLine(agent), tokensLine(tree)))
	if r.Provider != "" {
		kv.add("provider", clean(r.Provider))
	}
	if r.Workspace != "" {
		kv.add("workspace", clean(r.Workspace))
	}
	kv.write(w, "  ")

	if len(sh.tree) > 1 {
		fmt.Fprintf(w, "\ntree (%d agents; %s)\n", len(sh.tree), ownCounts)
		t := &table{header: []string{"AGENT", "STATE", "STEPS", "TOKENS", "WAITING", "GOAL"}, right: map[int]bool{2: true, 3: true, 4: true}}
		for _, l := range sh.treeLines() {
			got, _ := md.Read(l[0], rd.now)
			cr, own := got.Run, got.Own
			waiting := ""
			if n := got.Waiting; n > 0 {
				waiting = strconv.Itoa(n)
			}
			t.add(l[1]+clean(cr.ID), stateName(got.State), stepsText(own), tokensText(own, textfmt.Tokens), waiting,
				cleanCut(cr.Goal, goalWidth))
		}
		t.write(w, "  ")
	}

	fmt.Fprintf(w, "\nagent steps (%d)\n", len(sh.steps))
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
			t.add(strconv.Itoa(st.Number), dec, cleanCut(st.ToolCall, 56), stepTokensCell(st), retries)
		}
		t.write(w, "  ")
	}
	policyText(w, sh)

	d := runmodel.ComputeDrift(sh.samples)
	head := fmt.Sprintf("\ncontext (%d turns", d.Turns)
	if d.Missing > 0 {
		head += fmt.Sprintf(", %d not reported", d.Missing)
	}
	if d.SumReported != 0 {
		head += ", cumulative drift " + textfmt.Percent(d.Cumulative)
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
		a.requestText(w, rd, q)
	}
	a.decisionsText(w, sh)
}

// requestText prints one request: its key and where it waits, then what it
// asks, indented.
func (a *app) requestText(w io.Writer, rd *reading, q store.Request) {
	d, why := rd.delivery(q)
	del := deliveryName(d)
	if why != "" {
		del += ": " + clean(why)
	}
	fmt.Fprintf(w, "  %s  run %s, step %d  [%s]\n", clean(requestKey(q.Key())), clean(q.RunID), q.Step, del)
	a.requestBody(w, q)
}

// requestBody prints what a request asks, indented.
func (a *app) requestBody(w io.Writer, q store.Request) {
	switch q.Kind {
	case store.Approval:
		size := ""
		if q.HasContent {
			size = fmt.Sprintf(" (%s bytes)", textfmt.Thousands(q.ContentBytes))
		}
		fmt.Fprintf(w, "    %s %s%s\n", clean(q.Act), clean(q.Target), size)
		if q.AlwaysAllow != "" {
			fmt.Fprintf(w, "    always-allow offered (vigil approve --always): %s\n", clean(q.AlwaysAllow))
		}
		if f := q.For; f.RunID != "" {
			line := "    for: " + clean(f.Format) + " run " + clean(f.RunID)
			if f.CallID != "" {
				line += ", tool call " + clean(f.CallID)
			}
			if !f.InSet {
				line += " (its store is not among those read)"
			}
			fmt.Fprintln(w, line)
		}
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

// mdEscaper backslash-escapes the characters that open Markdown's inline
// constructs (code, emphasis, links and images, raw HTML and autolinks,
// entities, strikethrough, table cells): a store's text is shown as text,
// never as markup a renderer acts on (a goal holding <img onerror=…> or
// [x](javascript:…) was written into the export as it was).
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "&", `\&`, "~", `\~`)

// mdBlockStart is what, at the start of a line, opens a heading, a list,
// a quote or a setext underline.
var mdBlockStart = regexp.MustCompile(`^([#=+-]|[0-9]{1,9}[.)])`)

// mdText is a store's text as Markdown inline text: one line, every
// character shown as itself.
func mdText(s string) string {
	s = mdEscaper.Replace(sanitize.Line(s))
	if m := mdBlockStart.FindStringIndex(s); m != nil {
		s = s[:m[1]-1] + `\` + s[m[1]-1:]
	}
	return s
}

// mdCell makes text safe inside a table cell.
func mdCell(s string) string {
	s = mdText(s)
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
	rd, md, r := sh.rd, sh.rd.md, sh.run
	fmt.Fprintf(w, "# Run %s: %s\n\n", mdText(r.ID), mdText(r.Goal))
	var rows [][]string
	add := func(k, v string) { rows = append(rows, []string{k, v}) }
	add("State", mdCell(stateName(md.State(sh.id, rd.now))+" ("+a.leaseLine(rd, sh.id)+")"))
	add("Status", mdCell(orDash(string(r.Status))))
	add("Outcome", mdCell(orDash(string(r.Outcome))))
	if !r.IsRoot() {
		add("Parent", mdCell(r.ParentID))
		add("Ancestry", mdCell(strings.Join(md.Ancestry(sh.id), " › ")))
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
	if d, ok := md.Duration(sh.id, rd.now); ok {
		add("Duration", textfmt.Duration(d))
	}
	agent, tree := md.Agent(sh.id), md.Tree(sh.id)
	add("Agent steps", stepsText(agent))
	add("Agent tokens", tokensLine(agent))
	add("Tree steps", stepsText(tree))
	add("Tree tokens", tokensLine(tree))
	if r.Provider != "" {
		add("Provider", mdCell(r.Provider))
	}
	if r.Workspace != "" {
		add("Workspace", mdCode(r.Workspace, true))
	}
	add("Store", mdCode(rd.src.Path(), true))
	mdTable(w, []string{"Field", "Value"}, rows)

	fmt.Fprintf(w, "## Tree\n\n%s.\n\n", capitalize(ownCounts))
	rows = nil
	for _, l := range sh.treeLines() {
		cr, _ := md.Run(l[0])
		own := md.Agent(l[0])
		rows = append(rows, []string{l[1] + mdCell(cr.ID), strconv.Itoa(cr.Depth), stateName(md.State(l[0], rd.now)),
			stepsText(own), tokensText(own, textfmt.Thousands), strconv.Itoa(md.Waiting(l[0])), mdCell(cr.Goal)})
	}
	mdTable(w, []string{"Agent", "Depth", "State", "Steps", "Tokens", "Waiting", "Goal"}, rows)

	fmt.Fprintf(w, "## Steps\n\nThe run's own steps.\n\n")
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
			rows = append(rows, []string{strconv.Itoa(st.Number), dec, mdCode(st.ToolCall, true), stepTokensCell(st),
				strings.Join(retries, "<br>")})
		}
		mdTable(w, []string{"Step", "Decision", "Tool call", "Tokens", "Retries"}, rows)
	}
	policyMarkdown(w, sh)

	fmt.Fprintf(w, "## Context\n\n")
	d := runmodel.ComputeDrift(sh.samples)
	if len(sh.samples) == 0 {
		fmt.Fprintf(w, "No context samples.\n\n")
	} else {
		fmt.Fprintf(w, "%d turns, %d not reported by the provider", d.Turns, d.Missing)
		if d.SumReported != 0 {
			fmt.Fprintf(w, "; cumulative drift %s (reported minus estimate, over reported)", textfmt.Percent(d.Cumulative))
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
		dl, why := rd.delivery(q)
		fmt.Fprintf(w, "### %s\n\n", mdText(requestKey(q.Key())))
		fmt.Fprintf(w, "Run %s, step %d. Delivery: %s", mdText(q.RunID), q.Step, deliveryName(dl))
		if why != "" {
			fmt.Fprintf(w, " (%s)", mdText(why))
		}
		fmt.Fprintf(w, ".\n\n")
		switch q.Kind {
		case store.Approval:
			fmt.Fprintf(w, "%s %s\n\n", mdCell(q.Act), mdCode(q.Target, false))
			if q.HasContent {
				if int64(len(q.Content)) < q.ContentBytes {
					fmt.Fprintf(w, "Content (first %s of %s bytes):\n\n", textfmt.Thousands(int64(len(q.Content))), textfmt.Thousands(q.ContentBytes))
				}
				mdFence(w, q.Content)
				fmt.Fprintln(w)
			}
		case store.Question:
			fmt.Fprintf(w, "> %s\n\n", mdText(q.Question))
			if q.Context != "" {
				mdFence(w, q.Context)
				fmt.Fprintln(w)
			}
			for _, c := range q.Choices {
				fmt.Fprintf(w, "- %s\n", mdText(c))
			}
			if len(q.Choices) > 0 {
				fmt.Fprintln(w)
			}
		case store.Plan:
			for i, p := range q.PlanSteps {
				agent := ""
				if p.Agent != "" {
					agent = " (" + mdText(p.Agent) + ")"
				}
				fmt.Fprintf(w, "%d. %s%s\n", i+1, mdText(p.Intent), agent)
			}
			fmt.Fprintln(w)
		}
	}
	a.decisionsMarkdown(w, sh)
}

// signed writes a count with its sign and thousands separators: +1,200.
func signed(n int64) string {
	if n >= 0 {
		return "+" + textfmt.Thousands(n)
	}
	return textfmt.Thousands(n)
}

// sampleCells is a context sample as table cells: step, estimate (a dash
// where the store has none), reported (missing where the provider gave
// none), gap and drift.
func sampleCells(c store.ContextSample, missing string) []string {
	j := sampleJSON(c)
	est, rep, gap, drift := "–", missing, "", ""
	if j.Estimated != nil {
		est = textfmt.Thousands(*j.Estimated)
	}
	if j.Reported != nil {
		rep = textfmt.Thousands(*j.Reported)
	}
	if j.Gap != nil {
		gap = signed(*j.Gap)
	}
	if j.Drift != nil {
		drift = textfmt.Percent(*j.Drift)
	}
	return []string{strconv.Itoa(c.Step), est, rep, gap, drift}
}
