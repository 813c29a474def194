package remote

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The rest of store.Source, asked of the agent. An agent that does not
// say its capabilities (an older vigil) is asked only what it answers;
// the rest comes from store's fallbacks over the calls it does answer.

// modern reports whether the agent answers every method of store.Source.
func (s *Source) modern() bool { return s.c.Hello().Capabilities != nil }

// Capabilities are the far store's, as its agent said them; an older
// agent's are what it was always asked.
func (s *Source) Capabilities() store.Capabilities {
	h := s.c.Hello()
	if h.Capabilities != nil {
		return store.CapabilitiesNamed(h.Capabilities)
	}
	caps := store.CapFacts | store.CapWriteClock | store.CapTrace
	if h.Activity {
		caps |= store.CapActivity
	}
	return caps
}

func (s *Source) Run(ctx context.Context, id string) (store.Run, error) {
	if !s.modern() {
		return s.legacy.Run(ctx, id)
	}
	var r store.Run
	return r, s.c.call(ctx, "Run", runParams{Run: id}, &r)
}

func (s *Source) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	if !s.modern() {
		return s.legacy.Request(ctx, key)
	}
	var r store.Request
	return r, s.c.call(ctx, "Request", key, &r)
}

func (s *Source) HasRun(ctx context.Context, id string) (bool, error) {
	if !s.modern() {
		return s.legacy.HasRun(ctx, id)
	}
	var r bool
	return r, s.c.call(ctx, "HasRun", runParams{Run: id}, &r)
}

func (s *Source) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	if !s.modern() {
		cur, err := s.Head(ctx)
		return cur, true, err
	}
	var r headResult
	if err := s.c.call(ctx, "HeadNewest", recentParams{Limit: limit}, &r); err != nil {
		return nil, false, err
	}
	return cursor{r.Cursor}, r.Whole, nil
}

// WholeHead asks the agent to make a written-down quick head follow every
// run; a cursor without a token already does.
func (s *Source) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(cursor)
	if !ok || len(c.w.Token) == 0 || !s.modern() {
		return cur, nil
	}
	var w wireCursor
	if err := s.c.call(ctx, "WholeHead", c.w, &w); err != nil {
		return nil, err
	}
	return cursor{w}, nil
}

// EachStepRow reads the rows a page (stepRowsPage) per call.
func (s *Source) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]store.StepRow) error) error {
	if !s.modern() {
		return s.legacy.EachStepRow(ctx, runID, from, to, fn)
	}
	for {
		var r stepRowsResult
		if err := s.c.call(ctx, "StepRows", stepRowsParams{Run: runID, From: from, To: to}, &r); err != nil {
			return err
		}
		if len(r.Rows) > 0 {
			if err := fn(r.Rows); err != nil {
				return err
			}
		}
		if !r.More || len(r.Rows) == 0 {
			return nil
		}
		from = r.Rows[len(r.Rows)-1].RowID + 1
	}
}

func (s *Source) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]store.ProviderCall, error) {
	if !s.modern() {
		return s.legacy.ProviderCallsFor(ctx, runID, lo, hi)
	}
	var r []store.ProviderCall
	return r, s.c.call(ctx, "ProviderCallsFor", stepRowsParams{Run: runID, Lo: lo, Hi: hi}, &r)
}

func (s *Source) StepDetails(ctx context.Context, runID string) ([]store.StepDetail, error) {
	if !s.modern() {
		return s.legacy.StepDetails(ctx, runID)
	}
	// One detail a piece: a run of many long steps is not one line.
	var r []store.StepDetail
	err := s.c.stream(ctx, "StepDetails", runParams{Run: runID}, func(raw json.RawMessage) error {
		var d store.StepDetail
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		r = append(r, d)
		return nil
	})
	return r, err
}

// WriteStepField writes the field as the agent streams it, a piece at a
// time.
func (s *Source) WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error {
	if !s.modern() {
		return s.legacy.WriteStepField(ctx, runID, rowID, field, w)
	}
	return s.c.stream(ctx, "StepField", fieldParams{Run: runID, Row: rowID, Field: field}, writeTo(w))
}

// WriteCanonicalTrace writes the run's trace as the agent streams it; an
// older agent sends it whole (CanonicalTrace).
func (s *Source) WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error {
	if !s.modern() {
		tr, err := s.CanonicalTrace(ctx, runID)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, tr)
		return err
	}
	return s.c.stream(ctx, "TraceStream", runParams{Run: runID}, writeTo(w))
}

// writeTo writes each piece of a streamed text to w.
func writeTo(w io.Writer) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var b []byte
		if err := json.Unmarshal(raw, &b); err != nil {
			return err
		}
		_, err := w.Write(b)
		return err
	}
}

func (s *Source) PolicyEvents(ctx context.Context, runID string) ([]store.PolicyEvent, error) {
	if !s.modern() {
		return nil, nil
	}
	var r []store.PolicyEvent
	return r, s.c.call(ctx, "PolicyEvents", runParams{Run: runID}, &r)
}

// CarriesReason is what the agent said of its format when the link was
// made.
func (s *Source) CarriesReason(kind store.RequestKind, v store.Verdict) bool {
	return slices.Contains(s.c.Hello().Reasons, reasonKey(kind, v))
}

// Problems are what the far store opened without; none while offline,
// and without a call when its format never says.
func (s *Source) Problems() []error {
	if !s.Capabilities().Has(store.CapProblems) || s.c.Offline() != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ws []*wireError
	if err := s.c.call(ctx, "Problems", nil, &ws); err != nil {
		return nil
	}
	out := make([]error, 0, len(ws))
	for _, w := range ws {
		out = append(out, fromWire(w))
	}
	return out
}

// ReadingNote is what the far store's connection reads it without; ""
// while offline, and without a call when its format never says.
func (s *Source) ReadingNote() string {
	if !s.Capabilities().Has(store.CapReadingNote) || s.c.Offline() != "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n string
	if s.c.call(ctx, "ReadingNote", nil, &n) != nil {
		return ""
	}
	return n
}

// EncodeCursor writes a cursor with a token down (the far store's own,
// which any agent on it reads back); one without cannot outlive its link.
func (s *Source) EncodeCursor(cur store.Cursor) ([]byte, error) {
	c, ok := cur.(cursor)
	if !ok {
		return nil, store.Errorf(s.Path(), store.ErrUnsupported, nil, "a cursor from another source")
	}
	if len(c.w.Token) == 0 {
		return nil, store.Errorf(s.Path(), store.ErrUnsupported, nil, "a %s store's cursors cannot be written down and resumed", s.Format())
	}
	return json.Marshal(c.w)
}

func (s *Source) DecodeCursor(b []byte) (store.Cursor, error) {
	var w wireCursor
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, store.Errorf(s.Path(), store.ErrCorrupt, err, "a cursor that cannot be read back")
	}
	return cursor{w}, nil
}
