package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// goalWidth caps the goal column of the runs table.
const goalWidth = 72

func (a *app) runs(ctx context.Context, s *session, asJSON bool) error {
	rd, err := a.read(ctx, s.src)
	if err != nil {
		return err
	}
	md := rd.md
	if asJSON {
		// The shape is jsonRuns, written a run at a time.
		d := newJSONDoc(a.stdout)
		d.field("store", storeJSON(s.src))
		d.field("at", jsonTime(rd.now))
		ids := md.Newest()
		d.runList("runs", len(ids), func(i int, j *jsonRun, sc *runScratch) { rd.fillRunJSON(j, ids[i], sc) })
		reqs := rd.openRequests(nil)
		d.list("requests", len(reqs), func(i int) any { return rd.requestJSON(reqs[i]) })
		return d.close()
	}
	if md.Len() == 0 {
		fmt.Fprintf(a.out(), "no runs in %s\n", clean(s.src.Path()))
		return nil
	}
	// Counts in both scopes: the agent's own (its timeline) and its whole
	// tree's (what the explorer's Runs pane shows for a root).
	t := &table{header: []string{"ID", "PARENT", "DEPTH", "STATE", "STATUS", "OUTCOME", "AGENT STEPS", "AGENT TOKENS",
		"TREE STEPS", "TREE TOKENS", "STARTED", "DURATION", "GOAL"},
		right: map[int]bool{2: true, 6: true, 7: true, 8: true, 9: true, 11: true}}
	for _, id := range md.Newest() {
		got, _ := md.Read(id, rd.now)
		r, agent, tree := got.Run, got.Own, got.Tree
		dur := "-"
		if got.HasDuration {
			dur = textfmt.Duration(got.Duration)
		}
		started := "-"
		if !r.StartedAt.IsZero() {
			started = r.StartedAt.In(a.loc).Format("2006-01-02 15:04")
		}
		t.add(clean(r.ID), orDash(clean(r.ParentID)), strconv.Itoa(r.Depth), stateName(got.State),
			orDash(cleanCut(string(r.Status), 12)), orDash(cleanCut(string(r.Outcome), 24)),
			stepsText(agent), tokensText(agent, textfmt.Tokens), stepsText(tree), tokensText(tree, textfmt.Tokens),
			started, dur, cleanCut(r.Goal, goalWidth))
	}
	t.write(a.out(), "")
	return nil
}
