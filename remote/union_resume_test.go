package remote

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/store/union"
)

// vigil here.sqlite3 ssh://far/…: far's link drops, both stores are
// written while it is down, far comes back to a new agent. The set's
// next Changes resumes far from its cursor: no Reset (the explorer loads
// nothing again), here is not read whole, each outage row comes once.
func TestUnionResumesOnlyTheStoreThatCameBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mk := func(name, goal string) (*harness.Store, string, string) {
		p := filepath.Join(dir, name)
		w, err := harness.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		run, err := w.StartRun(ctx, goal, "/w")
		if err != nil {
			t.Fatal(err)
		}
		w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: name + " before", Result: "ok", Tokens: 1})
		return w, p, run
	}
	hw, hp, hrun := mk("here.sqlite3", "here's run")
	fw, fp, frun := mk("far.sqlite3", "far's run")

	hold := filepath.Join(dir, "hold")
	c, err := Dial(ctx, Target{Host: "far", Path: fp}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, hold),
		BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hsrc, err := store.Open(hp, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	here := &countingSource{Source: hsrc}
	set, err := union.New([]union.Member{{Name: hp, Source: here}, {Name: "ssh://far" + fp, Source: c.Source(), Offline: c.Offline}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	src := set.Source()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var steps []string
	read := func() {
		t.Helper()
		for {
			ch, next, err := src.Changes(ctx, cur)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Reset {
				t.Fatal("the set says Reset: every store would be loaded again")
			}
			for _, s := range ch.Steps {
				steps = append(steps, s.RunID+" "+s.Decision)
			}
			cur = next
			if !ch.More {
				return
			}
		}
	}
	dropAndWait(t, c, hold, func() {
		hw.CheckpointStep(ctx, hrun, harness.StepRecord{Step: 2, Decision: "here during", Result: "ok", Tokens: 1})
		read() // here's row comes while far is offline
		if st := set.Stores(); st[1].Offline == "" || st[0].Offline != "" {
			t.Errorf("stores while far is down: %+v", st)
		}
		fw.CheckpointStep(ctx, frun, harness.StepRecord{Step: 2, Decision: "far during", Result: "ok", Tokens: 1})
	})
	read()
	read()
	sort.Strings(steps)
	if got := strings.Join(steps, "|"); got != "far/"+frun+" far during|here/"+hrun+" here during" {
		t.Errorf("rows after far came back: %s; want each outage row once", got)
	}
	if n := here.Loads(); n != 0 {
		t.Errorf("here was loaded whole %d times because far came back", n)
	}
	if st := c.Stats(); st.Resumed != 1 || st.Reloaded != 0 {
		t.Errorf("far's link: %+v; want one resume", st)
	}
}
