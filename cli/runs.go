package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/vigil-run/vigil/views"
)

// goalWidth caps the goal column of the runs table.
const goalWidth = 72

func (a *app) runs(ctx context.Context, s *session, asJSON bool) error {
	now := a.now()
	snap, err := loadSnapshot(ctx, s.src, now)
	if err != nil {
		return err
	}
	if asJSON {
		out := jsonRuns{Store: storeJSON(s.src), At: jsonTime(now), Runs: []jsonRun{}, Requests: []jsonRequest{}}
		for _, r := range snap.runs {
			out.Runs = append(out.Runs, snap.runJSON(r))
		}
		for _, q := range snap.open {
			out.Requests = append(out.Requests, snap.requestJSON(q))
		}
		return writeJSON(a.stdout, out)
	}
	if len(snap.runs) == 0 {
		fmt.Fprintf(a.stdout, "no runs in %s\n", clean(s.src.Path()))
		return nil
	}
	t := &table{header: []string{"ID", "PARENT", "DEPTH", "STATE", "STATUS", "OUTCOME", "STEPS", "TOKENS", "STARTED", "DURATION", "GOAL"},
		right: map[int]bool{2: true, 6: true, 7: true, 9: true}}
	for _, r := range snap.runs {
		rs := snap.stateOf(r)
		steps, tokens := "-", "-"
		if r.StatsKnown {
			steps, tokens = strconv.Itoa(r.Steps), views.Tokens(r.Tokens)
		}
		dur := "-"
		if d, ok := snap.duration(r, rs.state); ok {
			dur = views.Duration(d)
		}
		started := "-"
		if !r.StartedAt.IsZero() {
			started = r.StartedAt.In(a.loc).Format("2006-01-02 15:04")
		}
		t.add(clean(r.ID), orDash(clean(r.ParentID)), strconv.Itoa(r.Depth), stateName(rs.state),
			orDash(cleanCut(string(r.Status), 12)), orDash(cleanCut(string(r.Outcome), 24)), steps, tokens, started, dur,
			cleanCut(r.Goal, goalWidth))
	}
	t.write(a.stdout, "")
	return nil
}
