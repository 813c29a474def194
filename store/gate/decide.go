package gate

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Decide approves or denies a waiting request: a compare-and-set on state
// 'waiting' inside one BEGIN IMMEDIATE transaction. A request withdrawn or
// expired (or whose hook is gone, which Decide writes down as withdrawn)
// is refused with that reason; one already decided is lost to whoever won.
func (s *Store) Decide(ctx context.Context, d store.Decision) (res store.DecideResult, err error) {
	if s.readOnly {
		return res, store.Errorf(s.path, store.ErrReadOnly, nil, "%s not decided: %s", d.Key, s.why)
	}
	id, perr := strconv.ParseInt(d.Key.ID, 10, 64)
	if d.Key.Kind != store.Approval || perr != nil {
		return res, store.Errorf(s.path, store.ErrNoSuchReq, nil, "%s: the gate store holds approvals with numeric ids", d.Key)
	}
	state := map[store.Verdict]string{store.VerdictApprove: StateApproved, store.VerdictDeny: StateDenied}[d.Verdict]
	if state == "" {
		return res, store.Errorf(s.path, store.ErrUnsupported, nil, "%s: an approval is decided with approve or deny, not %q", d.Key, d.Verdict)
	}
	defer func() { s.write.Failed(s.read, err) }()
	db, err := s.write.Get(s.path)
	if err != nil {
		return res, err
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock=immediate)
	if err != nil {
		return res, sqlitex.MapErr(s.path, err)
	}
	defer tx.Rollback()
	cols, err := s.columns(ctx, tx)
	if err != nil {
		return res, err
	}
	row, err := scanRow(tx.QueryRowContext(ctx, "SELECT "+cols+" FROM gate_requests WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return res, store.Errorf(s.path, store.ErrNoSuchReq, nil, "no %s in the gate store", d.Key)
	}
	if err != nil {
		return res, sqlitex.MapErr(s.path, err)
	}
	if row.Gone() {
		_, reason := row.Effective()
		if _, err := tx.ExecContext(ctx, `UPDATE gate_requests SET state = 'withdrawn', reason = ?, decided_at = ?
			WHERE id = ? AND state = 'waiting'`, reason, time.Now().UnixMilli(), id); err != nil {
			return res, sqlitex.MapErr(s.path, err)
		}
		if err := tx.Commit(); err != nil {
			return res, sqlitex.MapErr(s.path, err)
		}
		return res, &store.RefusedError{Key: d.Key, Delivery: store.NotLive, Reason: "withdrawn: " + reason}
	}
	switch row.State {
	case StateWaiting:
	case StateApproved, StateDenied:
		return store.DecideResult{Decision: requestOf(row).Decision, DecidedBy: row.DecidedBy}, nil
	default:
		return res, &store.RefusedError{Key: d.Key, Delivery: store.NotLive, Reason: row.State + ": " + row.Reason}
	}
	if d.Always && (d.Verdict != store.VerdictApprove || row.Suggestions == "") {
		return res, store.Errorf(s.path, store.ErrUnsupported, nil, "%s: its agent offers no always-allow; approve it once", d.Key)
	}
	reason := ""
	if d.Verdict == store.VerdictDeny {
		reason = d.Text
	}
	by := d.By
	if by == "" {
		by = decidedBy()
	}
	q, args := `UPDATE gate_requests SET state = ?, reason = ?, decided_by = ?, decided_at = ?`, []any{state, reason, by, time.Now().UnixMilli()}
	if d.Always {
		q += `, always = 1`
	}
	r, err := tx.ExecContext(ctx, q+` WHERE id = ? AND state = 'waiting'`, append(args, id)...)
	if err != nil {
		return res, sqlitex.MapErr(s.path, err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return res, store.Errorf(s.path, store.ErrCorrupt, err, "%s: the compare-and-set changed %d rows", d.Key, n)
	}
	if err := tx.Commit(); err != nil {
		return res, sqlitex.MapErr(s.path, err)
	}
	return store.DecideResult{Won: true, Decision: string(d.Verdict), DecidedBy: by}, nil
}
