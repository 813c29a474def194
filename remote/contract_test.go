package remote

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A field far larger than a detail holds comes over the link whole, in
// pieces, as the far store writes it; a reader that gives up half way
// leaves the link as it was.
func TestAFieldWholeComesOverTheLinkInPieces(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := w.StartRun(ctx, "a long result", "/w")
	if err != nil {
		t.Fatal(err)
	}
	result := strings.Repeat("0123456789abcdef", 3*store.MaxDetailBytes/16+5) // several pieces and a part
	if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read", Result: result, Tokens: 1}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, filepath.Join(t.TempDir(), "no-hold"))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := c.Source()
	steps, err := src.Steps(ctx, run)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %v, %v", steps, err)
	}
	d, err := src.StepDetail(ctx, run, steps[0].RowID)
	if err != nil || d.FieldBytes["result"] != int64(len(result)) {
		t.Fatalf("the detail says the result is %d bytes (%v), want it cut from %d", d.FieldBytes["result"], err, len(result))
	}
	var b bytes.Buffer
	if err := src.WriteStepField(ctx, run, steps[0].RowID, "result", &b); err != nil || b.String() != result {
		t.Fatalf("the field came as %d bytes (%v), want %d", b.Len(), err, len(result))
	}

	full := errors.New("the reader's disk is full")
	if err := src.WriteStepField(ctx, run, steps[0].RowID, "result", failing{full}); !errors.Is(err, full) {
		t.Fatalf("a reader that fails: %v", err)
	}
	if got, err := src.HasRun(ctx, run); !got || err != nil {
		t.Fatalf("after a stream given up, the link answers HasRun %v, %v", got, err)
	}
	b.Reset()
	if err := src.WriteCanonicalTrace(ctx, run, &b); err != nil || !strings.Contains(b.String(), result) {
		t.Fatalf("the trace came as %d bytes (%v), without the whole result", b.Len(), err)
	}
}

// failing is a writer that takes nothing.
type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }

// An agent of an older vigil says no capabilities and knows only the
// calls it always knew: the rest is answered from those, with store's
// fallbacks, on this side.
func TestAnOlderAgentIsReadWithFallbacks(t *testing.T) {
	far := script(t, `echo '{"hello":{"proto":2,"min_proto":1,"vigil":"old","instance":"'$$'","format":"io-harness","recent_runs":true}}'
while read -r line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
  *'"Runs"'*) echo '{"id":'$id',"result":[{"ID":"7","Goal":"old"}]}';;
  *'"RunStats"'*) echo '{"id":'$id',"result":{"7":{"Steps":3,"Tokens":42}}}';;
  *) echo '{"id":'$id',"error":{"message":"vigil agent: no method"}}';;
  esac
done`)
	c, err := Dial(context.Background(), Target{Host: "far", Path: "/x"}, Options{SSH: fakeSSH(t), RemoteVigil: far})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := c.Source()
	if caps := src.Capabilities(); caps.Has(store.CapRun) || caps.Has(store.CapWindow) {
		t.Errorf("an older agent offers %s", caps)
	}
	r, err := src.Run(context.Background(), "7")
	if err != nil || r.Goal != "old" || !r.StatsKnown || r.Tokens != 42 {
		t.Errorf("Run(7) = %+v, %v: want it from Runs and RunStats", r, err)
	}
	if ok, err := src.HasRun(context.Background(), "8"); ok || err != nil {
		t.Errorf("HasRun(8) = %v, %v", ok, err)
	}
	if src.CarriesReason(store.Approval, store.VerdictDeny) {
		t.Error("an older agent's format carries a reason")
	}
}
