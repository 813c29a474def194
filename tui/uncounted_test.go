package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// uncountedSource lists one finished run as a store does whose counts wait
// on a record too big for SQL (Starweaver's 200 MB tool return): with its
// summary, its counts unknown, left to RunStats.
type uncountedSource struct {
	store.Source
	id string
}

func (u *uncountedSource) Runs(ctx context.Context) ([]store.Run, error) {
	runs, err := u.Source.Runs(ctx)
	for i := range runs {
		if r := &runs[i]; r.ID == u.id {
			sum := *r.Summary
			sum.Steps, sum.Tokens = 0, 0
			r.Summary, r.Steps, r.Tokens, r.StatsKnown = &sum, 0, 0, false
		}
	}
	return runs, err
}

// The first frame shows such a run with "…" for its counts, never a
// number; the count, when it comes, fills them in.
func TestUncountedFinishedRunIsFilledIn(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inner, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	ctx := context.Background()
	md, err := runmodel.Load(ctx, inner, fixture.Now)
	if err != nil {
		t.Fatal(err)
	}
	// A finished run alone in its tree, with tokens.
	var want store.Run
	var tokens string
	for _, id := range md.Roots() {
		rd, _ := md.Read(id, fixture.Now)
		if rd.Run.Summary != nil && rd.Agents == 1 && rd.Own.Tokens > 0 {
			want, tokens = rd.Run, textfmt.Tokens(rd.Own.Tokens)
			break
		}
	}
	if want.ID == "" {
		t.Fatal("the fixture has no finished lone run with tokens")
	}
	var stats map[string]store.RunStats
	d := openDriver(t, path, 200, 60, func(o *Options) {
		src := o.Source
		o.Source = &uncountedSource{Source: src, id: want.ID}
		st, err := src.RunStats(ctx, []string{want.ID})
		if err != nil {
			t.Fatal(err)
		}
		stats = st
	})
	row := func() string {
		goal := want.Goal[:min(len(want.Goal), 20)]
		for _, l := range strings.Split(d.screen(), "\n") {
			if strings.Contains(l, goal) && !strings.Contains(l, "Timeline") {
				return strings.SplitN(l, "││", 2)[0] // the runs pane's part
			}
		}
		t.Fatalf("no row of %s on screen:\n%s", want.ID, d.screen())
		return ""
	}
	// The driver has run the first load and the count RunStats gives (the
	// wrapper's inner source answers it): so undo it, as if the count were
	// still on its way, by loading again without counting.
	runs, err := d.m.src.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.m.st.model.SetRuns(runs)
	d.m.refreshItems()
	if l := row(); !strings.Contains(l, "…") || strings.Contains(l, " "+tokens+" ") {
		t.Errorf("before the count, the row shows a figure: %q (want … for %s)", l, tokens)
	}
	t.Logf("before: %s", row())
	d.send(statsMsg{from: from{d.m.src.gen}, stats: stats})
	t.Logf("after:  %s", row())
	if l := row(); strings.Contains(l, "…") || !strings.Contains(l, tokens) {
		t.Errorf("after the count: %q, want %s", l, tokens)
	}
}
