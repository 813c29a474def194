package remote

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/internal/testkit/swfixture"
	_ "github.com/vigil-run/vigil/store/starweaver" // the far side opens Starweaver stores
)

// swStore is a Starweaver session database with one running run, as
// Starweaver's own process writes it.
type swStore struct {
	t             *testing.T
	db            *sql.DB
	path          string
	session, run  string
	seq           int
	approval      string
	approvalAt    string
	approvalBytes string
}

const swTS = "2026-07-13T10:00:00Z"

func newSWStore(t *testing.T, path, run, goal string) *swStore {
	t.Helper()
	db, err := swfixture.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &swStore{t: t, db: db, path: path, session: "session_" + run[4:], run: run}
	s.exec("INSERT INTO session_records (session_id, record, created_at, updated_at) VALUES (?, ?, ?, ?)", s.session,
		swfixture.Env("starweaver.session.session_record", 1, swfixture.J{"session_id", s.session, "title", goal, "workspace", "/w",
			"profile", "general", "status", "active", "created_at", swTS, "updated_at", swTS}), "2026-07-13T10:00:00+00:00", "2026-07-13T10:00:00+00:00")
	s.exec("INSERT INTO run_records (session_id, run_id, record, sequence_no, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", s.session, run,
		swfixture.Env("starweaver.session.run_record", 1, swfixture.J{"session_id", s.session, "run_id", run, "conversation_id", "conv_" + run[4:],
			"input", swfixture.A{swfixture.J{"kind", "text", "text", goal}}, "status", "running", "sequence_no", 1,
			"trigger_type", "cli", "profile", "general", "created_at", swTS, "updated_at", swTS}), 1, "2026-07-13T10:00:00+00:00", "2026-07-13T10:00:00+00:00")
	return s
}

func (s *swStore) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		s.t.Fatalf("%v\n%s", err, q)
	}
}

// turn is a model turn's stream record (its step number, its text).
func (s *swStore) turn(step int, text string) (string, int) {
	ev := swfixture.J{"kind", "model_response", "step", step, "response", swfixture.J{
		"parts", swfixture.A{swfixture.J{"kind", "text", "text", text}},
		"usage", swfixture.J{"requests", 1, "input_tokens", 10, "output_tokens", 1, "total_tokens", 11},
		"model_name", "claude-sonnet-4-5", "provider", swfixture.J{"name", "anthropic"},
		"finish_reason", "stop", "timestamp", swTS, "run_id", s.run}}
	seq := s.seq
	s.seq++
	return swfixture.Env("starweaver.runtime.stream_record", 1, swfixture.J{"sequence", seq, "event", ev}), seq
}

func (s *swStore) addTurn(step int, text string) {
	rec, seq := s.turn(step, text)
	s.exec("INSERT INTO stream_records (session_id, run_id, sequence_no, record) VALUES (?, ?, ?, ?)", s.session, s.run, seq, rec)
}

func (s *swStore) approvalRecord(status string, decision swfixture.J) string {
	p := swfixture.J{"approval_id", s.approval, "session_id", s.session, "run_id", s.run, "action_id", "call_1", "action_name", "write_file",
		"request", swfixture.J{"arguments", swfixture.J{"path", "a.go"}, "reason", "write_file requires approval", "toolset", "local"}, "status", status}
	if decision != nil {
		p = append(p, "decision", decision)
	}
	p = append(p, "created_at", swTS, "updated_at", swTS, "metadata", swfixture.J{"policy", "defer"})
	return swfixture.Env("starweaver.session.approval_record", 1, p)
}

func (s *swStore) ask() {
	s.approval = "approval_" + s.run + "_call_1"
	s.exec("INSERT INTO approval_records (session_id, run_id, approval_id, record, updated_at) VALUES (?, ?, ?, ?, ?)",
		s.session, s.run, s.approval, s.approvalRecord("pending", nil), "2026-07-13T10:00:00+00:00")
}

// The same as TestReconnectResumesFromTheCursor, on a Starweaver store
// written by a foreign party while the link is down (python3's sqlite3: a
// turn, and `starweaver approval approve`'s update): the reader's token
// resumes on the new agent, the turn once, the decision, no Reset; a
// database put at the path during the next outage says Reset, and why.
func TestReconnectResumesAStarweaverStore(t *testing.T) {
	py := foreign.Python(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "starweaver.sqlite")
	sw := newSWStore(t, path, "run_11111111-2222-4333-8444-555566667777", "outlives the link")
	sw.addTurn(1, "before the outage")
	sw.ask()

	var log linkLog
	hold := filepath.Join(dir, "hold")
	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, hold),
		BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Log: log.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if f := c.Hello().Format; f != "starweaver" {
		t.Fatalf("the far store is %q", f)
	}
	src := c.Source()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.(cursor).w.Token) == 0 {
		t.Fatal("a Starweaver cursor over protocol 2 carries no token")
	}
	first := c.Hello().Instance

	dropAndWait(t, c, hold, func() {
		rec, seq := sw.turn(2, "while the link was down")
		decided := sw.approvalRecord("approved", swfixture.J{"status", "approved", "decided_by", "starweaver-cli", "decided_at", "2026-07-13T10:20:00Z"})
		py.MustExec(t, path, fmt.Sprintf("INSERT INTO stream_records (session_id, run_id, sequence_no, record) VALUES ('%s', '%s', %d, '%s'); "+
			"UPDATE approval_records SET record = '%s', updated_at = '2026-07-13T10:20:00+00:00' WHERE approval_id = '%s'",
			sw.session, sw.run, seq, rec, decided, sw.approval))
	})
	if c.Hello().Instance == first {
		t.Fatal("the same agent after a reconnect")
	}
	var steps []string
	var decided bool
	for {
		ch, next, err := src.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Reset {
			t.Fatalf("Reset after the reconnect (the store would be loaded again); log:\n%s", &log)
		}
		for _, s := range ch.Steps {
			steps = append(steps, s.Decision)
		}
		for _, r := range ch.Requests {
			decided = decided || (r.ID == sw.approval && r.Resolved && r.Decision == "approve" && r.DecidedBy == "starweaver-cli")
		}
		cur = next
		if !ch.More {
			break
		}
	}
	if strings.Join(steps, "|") != "while the link was down" {
		t.Errorf("steps after resuming: %q; want the outage's turn once", steps)
	}
	if !decided {
		t.Error("the CLI's decision during the outage did not come")
	}
	if st := c.Stats(); st.Resumed != 1 || st.Reloaded != 0 {
		t.Errorf("stats %+v; want one resume, no reload; log:\n%s", st, &log)
	}
	if ch, _, err := src.Changes(ctx, cur); err != nil || !ch.Empty() {
		t.Errorf("a second refresh: %+v %v", ch, err)
	}

	// Another Starweaver database put at the path while the link is down.
	dropAndWait(t, c, hold, func() {
		other := filepath.Join(dir, "other.sqlite")
		o := newSWStore(t, other, "run_99999999-2222-4333-8444-555566667777", "another store")
		for i := 1; i <= 4; i++ {
			o.addTurn(i, "another store's turn")
		}
		o.db.Close()
		sw.db.Close()
		for _, sfx := range []string{"-wal", "-shm"} {
			os.Remove(path + sfx)
		}
		if err := os.Rename(other, path); err != nil {
			t.Fatal(err)
		}
	})
	ch, _, err := src.Changes(ctx, cur)
	if err != nil || !ch.Reset {
		t.Fatalf("a cursor of the replaced store: %+v %v; want Reset", ch, err)
	}
	if st := c.Stats(); st.Reloaded != 1 {
		t.Errorf("stats %+v; want one reload", st)
	}
	if !strings.Contains(log.String(), "loading the store again: the store at "+path+" is not the one the cursor was made on") {
		t.Errorf("the reload is not said:\n%s", &log)
	}
}
