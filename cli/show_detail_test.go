package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/testkit"
)

// sharedFixture copies one of the io-harness release fixtures
// (testkit.IOHarnessFixtures) into a temporary directory.
func sharedFixture(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(testkit.IOHarnessFixtures(t), rel)
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			if suffix == "" {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// show --json carries each step's result, edits, observations, policy
// events, provider calls (with their token breakdown), citations and
// server tools: pinned on the populated store io-harness 0.22 wrote.
func TestShowJSONStepDetail(t *testing.T) {
	t.Parallel()
	p := sharedFixture(t, "store-0.22.0/populated.sqlite3")
	r := newHarness(t).run("show", "1", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc struct {
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var steps string
	for _, s := range doc.Steps {
		steps += string(s) + "\n"
	}
	golden.RequireEqual(t, steps)

	var st []jsonStep
	for _, s := range doc.Steps {
		var j jsonStep
		if err := json.Unmarshal(s, &j); err != nil {
			t.Fatal(err)
		}
		st = append(st, j)
	}
	last := st[3]
	if last.Result == nil || len(last.Edits) != 1 || len(last.Citations) != 2 || len(last.ServerTools) != 2 ||
		len(last.PolicyEvents) != 1 || len(last.Observations) != 2 || *last.ProviderCalls[0].CacheReadTokens != 7 {
		t.Errorf("step 4: %+v", last)
	}
}

// A step still pending (only its provider retries are written) has no
// result of its own, and lists every attempt made so far.
func TestShowJSONPendingStep(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("show", "5", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc jsonShow
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Steps) != 3 {
		t.Fatalf("%d steps", len(doc.Steps))
	}
	retried, pending := doc.Steps[1], doc.Steps[2]
	if retried.Result == nil || *retried.Result == "" || len(retried.Retries) != 1 || len(retried.ProviderCalls) != 2 ||
		retried.ProviderCalls[0].Failure == nil || *retried.ProviderCalls[0].Failure != "Server (HTTP 529)" {
		t.Errorf("step 2: %+v", retried)
	}
	if !pending.Pending || pending.Result != nil || len(pending.ProviderCalls) != 2 || len(pending.Retries) != 1 {
		t.Errorf("step 3: %+v", pending)
	}
}
