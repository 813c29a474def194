package ioharness

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/vigil-run/vigil/internal/cow"
	"github.com/vigil-run/vigil/store"
)

// cursorCodecVersion is the written cursor's layout: another one is not read.
const cursorCodecVersion = 1

// wireSQLCursor is an SQLCursor written down: every field, so a cursor read
// back in another process tells the same changes the original would.
type wireSQLCursor struct {
	V          int                       `json:"v"`
	Format     string                    `json:"format"`
	Marks      map[string]int64          `json:"marks"`
	Open       map[int64]string          `json:"open,omitempty"`
	Pending    []wirePending             `json:"pending,omitempty"`
	Unreported map[int64]int64           `json:"unreported,omitempty"`
	Life       map[int64]string          `json:"life,omitempty"`
	LeaseSig   string                    `json:"lease_sig"`
	Leases     map[string]store.Lease    `json:"leases,omitempty"`
	AttemptSig string                    `json:"attempt_sig"`
	Attempts   map[int64]*store.Recovery `json:"attempts,omitempty"`
	Schema     int64                     `json:"schema"`
	Ident      string                    `json:"ident"`
	OpenFrom   int64                     `json:"open_from,omitempty"`
}

type wirePending struct {
	Kind     store.RequestKind `json:"kind"`
	ID       string            `json:"id"`
	Standing string            `json:"standing"`
}

var _ store.CursorCodec = (*Store)(nil)

// EncodeCursor writes an io-harness cursor down (store.CursorCodec).
func (s *Store) EncodeCursor(cur store.Cursor) ([]byte, error) {
	c, ok := cur.(*SQLCursor)
	if !ok || c == nil {
		return nil, fmt.Errorf("a %s cursor is not an io-harness one", cursorName(cur))
	}
	w := wireSQLCursor{V: cursorCodecVersion, Format: Format, Marks: c.marks, Open: maps.Collect(c.open.All()),
		Unreported: maps.Collect(c.unreported.All()), Life: maps.Collect(c.life.All()), LeaseSig: c.leaseSig,
		Leases: c.leases, AttemptSig: c.attemptSig, Attempts: c.attempts, Schema: c.schema, Ident: c.ident, OpenFrom: c.openFrom}
	for k, v := range c.pending.All() {
		w.Pending = append(w.Pending, wirePending{Kind: k.Kind, ID: k.ID, Standing: v})
	}
	return json.Marshal(w)
}

// DecodeCursor reads back what EncodeCursor wrote (store.CursorCodec).
func (s *Store) DecodeCursor(b []byte) (store.Cursor, error) {
	var w wireSQLCursor
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errors.New("not a written io-harness cursor: " + err.Error())
	}
	if w.Format != Format || w.V != cursorCodecVersion {
		return nil, fmt.Errorf("a written %s cursor of layout %d; this vigil reads io-harness layout %d", w.Format, w.V, cursorCodecVersion)
	}
	if w.Marks == nil {
		return nil, errors.New("a written io-harness cursor without marks")
	}
	c := &SQLCursor{marks: w.Marks, open: cow.Of(orEmpty(w.Open)), unreported: cow.Of(orEmpty(w.Unreported)),
		life: cow.Of(orEmpty(w.Life)), leaseSig: w.LeaseSig, leases: w.Leases, attemptSig: w.AttemptSig,
		attempts: w.Attempts, schema: w.Schema, ident: w.Ident, openFrom: w.OpenFrom}
	pending := map[store.RequestKey]string{}
	for _, p := range w.Pending {
		pending[store.RequestKey{Kind: p.Kind, ID: p.ID}] = p.Standing
	}
	c.pending = cow.Of(pending)
	if c.leases == nil {
		c.leases = map[string]store.Lease{}
	}
	if c.attempts == nil {
		c.attempts = map[int64]*store.Recovery{}
	}
	return c, nil
}

func orEmpty[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
