package ioharness

import (
	"context"
	"sync/atomic"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// What vouches for what was learned of a table.
//
// Everything rows.go and stepzones.go learn says where rows lie at or below
// some row id, and stays true while no row at or below it is new: deleted
// rows only leave a learned range wider than it need be. A row is new
// below the learned end only when an id is handed out again, and that is
// what the witness watches, once per table for all that was learned there:
//
//   - io-harness never names an id: every write of these tables is an INSERT
//     that lets SQLite choose it (state/trace.rs record and
//     checkpoint_step for steps, record_observations, record_edit;
//     accounting.rs record_provider_call; approvals.rs record_event), and
//     it deletes only whole runs
//     (sessions.rs prune_counted: each run table by run_id IN the session's
//     runs, then runs). With AUTOINCREMENT (steps, policy_events,
//     provider_calls, edits) SQLite hands out ids above sqlite_sequence's
//     seq, which only grows: no deletion, of any rows, lets an id come
//     back while seq has not gone down.
//   - ledger_observations has no AUTOINCREMENT: SQLite hands out max(id)+1,
//     so deleting the newest rows gives their ids to the next ones. For one
//     to land at or below the learned end, every row above it must have
//     gone first, the newest rows among them: the witness keeps a
//     fingerprint of the rows in the last witnessSpan ids it vouches for
//     (their count, and sums of their ids, runs and steps, two of them
//     weighted by position), which a rewrite of them changes.
//
// A count and max(id) would not do: rows deleted and written again under
// the same ids leave both as they were. Nor would the row at the end alone
// (what was checked before): a rewrite can end on a row of the same run
// and step. What no check short of reading every row can see is a writer
// that names ids itself below the last witnessSpan, or rewrites those last
// rows row for row with the same run and step while changing older ones,
// or UPDATEs a row's run_id or step; io-harness does none of these.
//
// The check costs two small reads, and none while PRAGMA data_version and
// total_changes() say nothing was committed since it last held.

// witnessSpan is how many ids below the vouched end the fingerprint covers.
const witnessSpan = 1 << zoneShift

// genSeq numbers what is learned of a table, so that zones learned with one
// generation are known stale after the table's learning was dropped.
var genSeq atomic.Uint64

type fingerprint [6]float64

type witness struct {
	ok      bool
	through int64 // every row at or below it is as learned
	seq     int64 // sqlite_sequence's seq for the table then (-1: none)
	print   fingerprint
	version [2]uint64 // data_version and total_changes() when it last held
}

// vouch checks that what tb learned still holds at the table's end top,
// dropping all of it when not, and moves the witness to top. Called with
// tb.mu held.
func (tb *tableBounds) vouch(ctx context.Context, s *Store, table string, top int64) error {
	version, err := s.commitVersion(ctx)
	if err != nil {
		return err
	}
	if tb.gen == 0 {
		tb.gen = genSeq.Add(1)
	}
	if tb.wit.ok && tb.wit.version == version && tb.wit.through == top {
		return nil // nothing committed since it held
	}
	if tb.wit.ok {
		holds := top >= tb.wit.through
		if holds {
			w, err := takeWitness(ctx, s, table, tb.wit.through)
			if err != nil {
				return err
			}
			holds = w.seq >= tb.wit.seq && w.print == tb.wit.print
		}
		if !holds {
			tb.reset()
		}
	}
	if !tb.wit.ok || tb.wit.through != top {
		w, err := takeWitness(ctx, s, table, top)
		if err != nil {
			return err
		}
		tb.wit = w
	}
	tb.wit.version = version
	return nil
}

// reset drops everything learned of the table: some row at or below the
// witness's end may be new.
func (tb *tableBounds) reset() {
	tb.wit, tb.gen = witness{}, genSeq.Add(1)
	tb.birthKnown, tb.birthRuns, tb.birthTop = false, 0, 0
	tb.spans = map[int64]span{}
	tb.all, tb.allThrough = false, 0
}

// takeWitness reads sqlite_sequence's seq for table and the fingerprint of
// its rows in (through-witnessSpan, through].
func takeWitness(ctx context.Context, s *Store, table string, through int64) (witness, error) {
	w := witness{ok: true, through: through, seq: -1}
	if si := s.si(); si != nil && si.has("sqlite_sequence") {
		err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), -1) FROM sqlite_sequence WHERE name = ?", table).Scan(&w.seq)
		if err != nil {
			return witness{}, err
		}
	}
	p := &w.print
	err := s.read.QueryRowContext(ctx, "SELECT COUNT(*), TOTAL(id), TOTAL(run_id), TOTAL(step), TOTAL((id & 4095) * run_id), TOTAL((id & 4095) * step) FROM "+
		table+" NOT INDEXED WHERE id > ? AND id <= ?", through-witnessSpan, through).Scan(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5])
	if err != nil {
		return witness{}, err
	}
	return w, nil
}

// commitVersion moves whenever anything is committed to the store: by
// another connection (data_version), or by the read connection itself,
// which is the writing one in a writer's Store (total_changes()).
func (s *Store) commitVersion(ctx context.Context) ([2]uint64, error) {
	dv, changes, err := sqlitex.CommitVersion(ctx, s.read)
	return [2]uint64{dv, changes}, err
}
