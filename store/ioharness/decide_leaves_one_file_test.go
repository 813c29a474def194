package ioharness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// A decision on a WAL store nobody else has open leaves it as SQLite's
// last connection would: one file holding the decision, no -wal or -shm
// beside it. The writing connection closed before the browsing one, which
// may not checkpoint, left the decision in a -wal that a copy of the store
// file alone does not carry.
func TestADecisionOnAQuietStoreLeavesOneFile(t *testing.T) {
	py := foreign.Python(t)
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	owner := fmt.Sprintf("%d-%d-1", os.Getpid(), time.Now().UnixNano()) // a live driver: this process
	if _, err := py.Exec(path, "PRAGMA journal_mode=WAL;"+schema.SQL+
		";INSERT INTO runs (goal, file) VALUES ('g', 'f')"+
		";INSERT INTO pending_approvals (run_id, step, act, target) VALUES (1, 1, 'write', 'deploy.yaml')"+
		";INSERT INTO run_leases (run_id, owner, generation, ttl_secs) VALUES (1, '"+owner+"', 1, 3600)"); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Fatalf("the store has a %s before the decision", side)
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "1"}, Verdict: store.VerdictApprove})
	if err != nil || !res.Won {
		t.Fatalf("decide: %+v %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Errorf("a %s is left beside the store after the decision", side)
		}
	}
	// The file alone, read as it stands (immutable: no WAL consulted).
	if got := py.MustExec(t, "file:"+path+"?immutable=1", "SELECT resolved FROM pending_approvals WHERE id = 1"); got != "approve" {
		t.Errorf("the store file alone holds %q for the decision", got)
	}
}
