package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The calls below carry the rest of store.Source (the agent's source is a
// complete one: what the far format lacks it answers with store's
// fallback, on the far side). An agent that says its capabilities in its
// hello answers them all; an older one is read with the fallbacks on the
// client's side.

// stepRowsPage is at most how many timeline rows one StepRows answer
// carries: each page is its own call, as each is its own read there.
const stepRowsPage = 2000

// streamChunk is how many bytes one piece of a streamed answer carries.
const streamChunk = 256 << 10

// streamed are the calls answered in pieces, and streamTimeout how long
// one may take: the pieces wait for the link to carry them.
var streamed = map[string]bool{"StepField": true, "TraceStream": true, "StepDetails": true}

const streamTimeout = 10 * time.Minute

// reasonKinds and reasonVerdicts are what CarriesReason is asked of, for
// the hello's list.
var (
	reasonKinds    = []store.RequestKind{store.Approval, store.Question, store.Plan}
	reasonVerdicts = []store.Verdict{store.VerdictApprove, store.VerdictDeny, store.VerdictRevise, store.VerdictCancel, ""}
)

func reasonKey(k store.RequestKind, v store.Verdict) string { return k.String() + "/" + string(v) }

// reasonsOf lists the kinds and verdicts src's format carries a reason
// with.
func reasonsOf(src store.Source) []string {
	out := []string{}
	for _, k := range reasonKinds {
		for _, v := range reasonVerdicts {
			if src.CarriesReason(k, v) {
				out = append(out, reasonKey(k, v))
			}
		}
	}
	return out
}

// errPageFull stops a read whose page is full.
var errPageFull = errors.New("page full")

// contractCall answers the calls of the contract's capabilities; handled
// says whether method is one.
func (a *agent) contractCall(ctx context.Context, src store.Source, req request) (res any, handled bool, err error) {
	switch req.Method {
	case "Run":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		r, err := src.Run(ctx, p.Run)
		return r, true, err
	case "Request":
		k, err := decode[store.RequestKey](req.Params)
		if err != nil {
			return nil, true, err
		}
		q, err := src.Request(ctx, k)
		return q, true, err
	case "HasRun":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		ok, err := src.HasRun(ctx, p.Run)
		return ok, true, err
	case "HeadNewest":
		p, err := decode[recentParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		r, err := a.headNewest(ctx, src, p.Limit)
		return r, true, err
	case "WholeHead":
		c, err := decode[wireCursor](req.Params)
		if err != nil {
			return nil, true, err
		}
		r, err := a.wholeHead(ctx, src, c)
		return r, true, err
	case "StepRows":
		p, err := decode[stepRowsParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		r, err := stepRows(ctx, src, p)
		return r, true, err
	case "ProviderCallsFor":
		p, err := decode[stepRowsParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		cs, err := src.ProviderCallsFor(ctx, p.Run, p.Lo, p.Hi)
		return cs, true, err
	case "StepDetails":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		ds, err := src.StepDetails(ctx, p.Run)
		for _, d := range ds {
			raw, merr := json.Marshal(d)
			if merr != nil {
				return nil, true, merr
			}
			a.w.write(reply{ID: req.ID, Result: raw, More: true})
		}
		return nil, true, err
	case "PolicyEvents":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		evs, err := src.PolicyEvents(ctx, p.Run)
		return evs, true, err
	case "Problems":
		var out []*wireError
		for _, e := range src.Problems() {
			out = append(out, toWire(e))
		}
		return out, true, nil
	case "ReadingNote":
		return src.ReadingNote(), true, nil
	case "StepField":
		p, err := decode[fieldParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		return nil, true, a.stream(req.ID, func(w io.Writer) error {
			return src.WriteStepField(ctx, p.Run, p.Row, p.Field, w)
		})
	case "TraceStream":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, true, err
		}
		return nil, true, a.stream(req.ID, func(w io.Writer) error {
			return src.WriteCanonicalTrace(ctx, p.Run, w)
		})
	}
	return nil, false, nil
}

// headNewest is the far store's quick head written down, when its cursors
// can be; else the head Head gives, which follows every run (whole).
func (a *agent) headNewest(ctx context.Context, src store.Source, limit int) (headResult, error) {
	if !src.Capabilities().Has(store.CapQuickHead | store.CapCursorCodec) {
		c, err := a.head(ctx, src)
		return headResult{Cursor: c, Whole: true}, err
	}
	cur, whole, err := src.HeadNewest(ctx, limit)
	if err != nil {
		return headResult{}, err
	}
	c, err := a.tokenCursor(src, cur)
	return headResult{Cursor: c, Whole: whole}, err
}

// wholeHead makes a written-down quick head follow every run; a hub
// position already does.
func (a *agent) wholeHead(ctx context.Context, src store.Source, c wireCursor) (wireCursor, error) {
	if len(c.Token) == 0 {
		return c, nil
	}
	cur, err := src.DecodeCursor(c.Token)
	if err != nil {
		return wireCursor{}, err
	}
	if cur, err = src.WholeHead(ctx, cur); err != nil {
		return wireCursor{}, err
	}
	return a.tokenCursor(src, cur)
}

// stepRows is one page of a run's timeline rows from p.From.
func stepRows(ctx context.Context, src store.Source, p stepRowsParams) (stepRowsResult, error) {
	var r stepRowsResult
	err := src.EachStepRow(ctx, p.Run, p.From, p.To, func(rows []store.StepRow) error {
		for _, row := range rows {
			if len(r.Rows) == stepRowsPage {
				r.More = true
				return errPageFull
			}
			r.Rows = append(r.Rows, row)
		}
		return nil
	})
	if errors.Is(err, errPageFull) {
		err = nil
	}
	return r, err
}

// stream sends what write writes as pieces of the answer to id (replies
// with More), each at most streamChunk bytes; the call's own reply ends
// it.
func (a *agent) stream(id int64, write func(io.Writer) error) error {
	w := &chunkWriter{flush: func(b []byte) {
		raw, _ := json.Marshal(b)
		a.w.write(reply{ID: id, Result: raw, More: true})
	}}
	err := write(w)
	w.Flush()
	return err
}

// chunkWriter gathers writes into pieces of streamChunk bytes.
type chunkWriter struct {
	buf   []byte
	flush func([]byte)
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), streamChunk-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == streamChunk {
			w.Flush()
		}
	}
	return n, nil
}

// Flush sends what is gathered.
func (w *chunkWriter) Flush() {
	if len(w.buf) > 0 {
		w.flush(w.buf)
		w.buf = w.buf[:0]
	}
}
