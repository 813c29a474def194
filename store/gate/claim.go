package gate

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// A claim is vigil's compare-and-set in front of a request another program
// keeps and answers for itself (opencode's server): before a decision is
// sent there, it is claimed here under the request's key, and the first
// claim wins. Whoever comes second reads the claim: who decided, what,
// and how sending it ended (Outcome).
const claimSchema = `CREATE TABLE IF NOT EXISTS gate_claims (
	key TEXT PRIMARY KEY,
	verdict TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	decided_by TEXT NOT NULL,
	decided_at INTEGER NOT NULL,
	outcome TEXT NOT NULL DEFAULT ''
)`

// Outcomes of a claim: sending, sent, or the request had been answered
// in the program itself before the claim's answer arrived.
const (
	ClaimSending  = ""
	ClaimSent     = "sent"
	ClaimAnswered = "answered elsewhere"
)

// Claim is one decision claimed on a foreign request.
type Claim struct {
	Key       string // "<agent> <the program's request id>"
	Verdict   string
	Reason    string
	DecidedBy string
	DecidedAt time.Time
	Outcome   string
}

// Claim takes c.Key for c unless someone has: won, or the claim that holds
// it. The claims table is made on first use.
func (h *Hook) Claim(ctx context.Context, c Claim) (won bool, held Claim, err error) {
	if _, err := h.db.ExecContext(ctx, claimSchema); err != nil {
		return false, held, sqlitex.MapErr(h.abs, err)
	}
	if c.DecidedBy == "" {
		c.DecidedBy = decidedBy()
	}
	res, err := h.db.ExecContext(ctx, `INSERT INTO gate_claims (key, verdict, reason, decided_by, decided_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`, c.Key, c.Verdict, c.Reason, c.DecidedBy, time.Now().UnixMilli())
	if err != nil {
		return false, held, sqlitex.MapErr(h.abs, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, held, err
	} else if n == 1 {
		return true, c, nil
	}
	held, found, err := h.Claimed(ctx, c.Key)
	if err == nil && !found {
		err = errors.New("gate: a claim vanished under its key") // rows are never deleted while a sender works
	}
	return false, held, err
}

// Settle records how sending a won claim ended.
func (h *Hook) Settle(ctx context.Context, key, outcome string) error {
	_, err := h.db.ExecContext(ctx, "UPDATE gate_claims SET outcome = ? WHERE key = ?", outcome, key)
	return sqlitex.MapErr(h.abs, err)
}

// Release gives a claim back: its answer never reached the program (it was
// not running), so the request is still open to a decision.
func (h *Hook) Release(ctx context.Context, key string) error {
	_, err := h.db.ExecContext(ctx, "DELETE FROM gate_claims WHERE key = ?", key)
	return sqlitex.MapErr(h.abs, err)
}

// Claimed reads the claim under key.
func (h *Hook) Claimed(ctx context.Context, key string) (Claim, bool, error) {
	if _, err := h.db.ExecContext(ctx, claimSchema); err != nil {
		return Claim{}, false, sqlitex.MapErr(h.abs, err)
	}
	var c Claim
	var at int64
	err := h.db.QueryRowContext(ctx, "SELECT key, verdict, reason, decided_by, decided_at, outcome FROM gate_claims WHERE key = ?", key).
		Scan(&c.Key, &c.Verdict, &c.Reason, &c.DecidedBy, &at, &c.Outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return Claim{}, false, nil
	}
	if err != nil {
		return Claim{}, false, sqlitex.MapErr(h.abs, err)
	}
	c.DecidedAt = time.UnixMilli(at)
	return c, true, nil
}

// Requests another program keeps are remembered as vigil saw them waiting,
// so that one answered there (opencode's TUI) still shows, answered, to a
// vigil process that did not see it wait: the program keeps no record of
// what it answered.
const seenSchema = `CREATE TABLE IF NOT EXISTS gate_seen (
	key TEXT PRIMARY KEY,
	body TEXT NOT NULL,
	seen_at INTEGER NOT NULL
)`

// Remember records a foreign request (body: the program's own JSON) under
// key, once.
func (h *Hook) Remember(ctx context.Context, key, body string) error {
	if _, err := h.db.ExecContext(ctx, seenSchema); err != nil {
		return sqlitex.MapErr(h.abs, err)
	}
	_, err := h.db.ExecContext(ctx, `INSERT INTO gate_seen (key, body, seen_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, body, time.Now().UnixMilli())
	return sqlitex.MapErr(h.abs, err)
}

// Remembered reads the foreign requests whose keys start with prefix, in
// the order they were seen: key → body.
func (h *Hook) Remembered(ctx context.Context, prefix string) ([][2]string, error) {
	if _, err := h.db.ExecContext(ctx, seenSchema); err != nil {
		return nil, sqlitex.MapErr(h.abs, err)
	}
	rows, err := h.db.QueryContext(ctx, "SELECT key, body FROM gate_seen WHERE substr(key, 1, ?) = ? ORDER BY seen_at, key", len(prefix), prefix)
	if err != nil {
		return nil, sqlitex.MapErr(h.abs, err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var kv [2]string
		if err := rows.Scan(&kv[0], &kv[1]); err != nil {
			return nil, sqlitex.MapErr(h.abs, err)
		}
		out = append(out, kv)
	}
	return out, sqlitex.MapErr(h.abs, rows.Err())
}
