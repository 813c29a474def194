package starweaver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-run/vigil/internal/cow"
	"github.com/vigil-run/vigil/store"
)

// cursorCodecVersion is the written cursor's layout: another one is not read.
const cursorCodecVersion = 1

// wireCursor is a Cursor written down: every field, so a cursor read back
// in another process (vigil agent started for a new link) tells the same
// changes the original would — the marks, the open runs' row signatures,
// the undecided requests' keys, the claims as the cursor saw them, the
// timelines' tails, the runs known to have a stream of their own, and
// ident, which tells a database written over this one.
type wireCursor struct {
	V       int               `json:"v"`
	Format  string            `json:"format"`
	Marks   map[string]int64  `json:"marks"`
	Open    map[string]string `json:"open,omitempty"`
	Pending []wirePending     `json:"pending,omitempty"`
	Claims  string            `json:"claims"`
	Claimed map[string]string `json:"claimed,omitempty"`
	Tails   map[string][2]int `json:"tails,omitempty"` // run → [step, attempt]
	Owned   []string          `json:"owned,omitempty"`
	Ident   string            `json:"ident"`
}

type wirePending struct {
	Kind    store.RequestKind `json:"kind"`
	ID      string            `json:"id"`
	Session string            `json:"session"`
	Run     string            `json:"run"`
	Key     string            `json:"key,omitempty"` // the record's key when it is not ID
}

var _ store.CursorCodec = (*Store)(nil)

// EncodeCursor writes a Starweaver cursor down (store.CursorCodec).
func (s *Store) EncodeCursor(cur store.Cursor) ([]byte, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		name := "nil"
		if cur != nil {
			name = cur.CursorFormat()
		}
		return nil, fmt.Errorf("a %s cursor is not a Starweaver one", name)
	}
	w := wireCursor{V: cursorCodecVersion, Format: Format, Marks: c.marks, Open: maps.Collect(c.open.All()),
		Claims: c.claims, Claimed: c.claimed, Ident: c.ident, Owned: slices.Sorted(c.owned.Keys())}
	for k, pk := range c.pending.All() {
		p := wirePending{Kind: k.Kind, ID: k.ID, Session: pk.session, Run: pk.run}
		if pk.id != k.ID {
			p.Key = pk.id
		}
		w.Pending = append(w.Pending, p)
	}
	// Sorted, so one cursor is always written the same.
	slices.SortFunc(w.Pending, func(a, b wirePending) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return strings.Compare(a.ID, b.ID)
	})
	if c.tails.Len() > 0 {
		w.Tails = map[string][2]int{}
		for run, t := range c.tails.All() {
			w.Tails[run] = [2]int{t.step, t.attempt}
		}
	}
	return json.Marshal(w)
}

// DecodeCursor reads back what EncodeCursor wrote (store.CursorCodec).
// Whether the database is still the one it was made on is for Changes to
// tell (Reset), as for any cursor.
func (s *Store) DecodeCursor(b []byte) (store.Cursor, error) {
	var w wireCursor
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errors.New("not a written Starweaver cursor: " + err.Error())
	}
	if w.Format != Format || w.V != cursorCodecVersion {
		return nil, fmt.Errorf("a written %s cursor of layout %d; this vigil reads starweaver layout %d", w.Format, w.V, cursorCodecVersion)
	}
	if w.Marks == nil {
		return nil, errors.New("a written Starweaver cursor without marks")
	}
	c := &Cursor{marks: w.Marks, open: cow.Of(orEmpty(w.Open)), claims: w.Claims, claimed: orEmpty(w.Claimed), ident: w.Ident}
	pending := map[store.RequestKey]key{}
	for _, p := range w.Pending {
		if p.Key == "" {
			p.Key = p.ID
		}
		pending[store.RequestKey{Kind: p.Kind, ID: p.ID}] = key{p.Session, p.Run, p.Key}
	}
	c.pending = cow.Of(pending)
	tails := map[string]tail{}
	for run, t := range w.Tails {
		tails[run] = tail{step: t[0], attempt: t[1]}
	}
	c.tails = cow.Of(tails)
	owned := map[string]struct{}{}
	for _, run := range w.Owned {
		owned[run] = struct{}{}
	}
	c.owned = cow.Of(owned)
	return c, nil
}

func orEmpty[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
