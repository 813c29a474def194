package remote

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Classify is asked inside the explorer's update, on every redraw: it
// never waits on the link. A far side that never answers costs nothing;
// one that answers has its answer used from then on.
func TestClassifyNeverWaitsOnTheLink(t *testing.T) {
	dir := t.TempDir()
	// An agent that says hello and never answers a Classify.
	mute := script(t, `echo '{"hello":{"proto":1,"vigil":"test","instance":"'$$'","format":"io-harness"}}'
while read -r line; do
  case "$line" in
  *'"Classify"'*) echo "$line" >> `+dir+`/asked;;
  esac
done`)
	c, err := Dial(context.Background(), Target{Host: "far", Path: "/x"}, Options{SSH: fakeSSH(t), RemoteVigil: mute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := c.Source()
	req := store.Request{Kind: store.Approval, ID: "2", RunID: "5"}
	run := store.Run{ID: "5", Status: store.StatusRunning}
	for i := 0; i < 3; i++ {
		start := time.Now()
		d, why := src.Classify(req, run, nil, time.Now())
		if took := time.Since(start); took > 200*time.Millisecond {
			t.Fatalf("Classify waited %v on a far side that does not answer", took)
		}
		if d != store.DeliveryUnknown || !strings.Contains(why, "asking far") {
			t.Errorf("before an answer: %v %q", d, why)
		}
	}
	waitFile(t, filepath.Join(dir, "asked"))
}

// The agent's own answer replaces "asking" once it comes.
func TestClassifyUsesTheAgentsAnswer(t *testing.T) {
	path, req, run := leasedApproval(t)
	c, err := Dial(context.Background(), Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, filepath.Join(t.TempDir(), "hold"))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := c.Source()
	now := time.Now()
	if d, why := src.Classify(req, run, run.Lease, now); d != store.DeliveryUnknown || !strings.Contains(why, "asking far") {
		t.Errorf("the first answer is the agent's, waited for: %v %q", d, why)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, why := src.Classify(req, run, run.Lease, now)
		if d == store.Deliverable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from the agent: %v %q", d, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leasedApproval is a store whose one run holds a lease and waits on an
// approval: the request and the run as read there.
func leasedApproval(t *testing.T) (string, store.Request, store.Run) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	id, _ := w.StartRun(ctx, "leased", "/w")
	if _, err := w.AcquireLease(ctx, id, time.Hour); err != nil {
		t.Fatal(err)
	}
	rid, err := w.PutPending(ctx, id, 1, "write", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ioharness.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	req, err := r.Request(ctx, store.RequestKey{Kind: store.Approval, ID: rid})
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return path, req, run
}
