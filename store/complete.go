package store

import (
	"context"

	"io"
	"sort"
	"time"
)

// Complete makes a format's Core a Source: it looks for each optional
// interface of capabilities.go once, and answers the ones the format
// lacks with the fallback each documents. A Core that is already a Source
// (a wrapper) is returned as it is.
func Complete(c Core) Source {
	if s, ok := c.(Source); ok {
		return s
	}
	s := &completed{Core: c}
	s.run, s.caps = has[RunGetter](c, s.caps, CapRun)
	s.req, s.caps = has[RequestGetter](c, s.caps, CapRequest)
	s.find, s.caps = has[RunFinder](c, s.caps, CapHasRun)
	s.recent, s.caps = has[RecentRunner](c, s.caps, CapFirstPage)
	s.quick, s.caps = has[QuickHeader](c, s.caps, CapQuickHead)
	s.ranger, s.caps = has[StepRanger](c, s.caps, CapWindow)
	s.details, s.caps = has[DetailReader](c, s.caps, CapDetails)
	s.fields, s.caps = has[FieldWriter](c, s.caps, CapFields)
	s.facts, s.caps = has[FactReader](c, s.caps, CapFacts)
	s.activity, s.caps = has[ActivityReader](c, s.caps, CapActivity)
	s.clock, s.caps = has[WriteClock](c, s.caps, CapWriteClock)
	s.policy, s.caps = has[PolicyReader](c, s.caps, CapPolicy)
	s.reason, s.caps = has[ReasonCarrier](c, s.caps, CapReason)
	s.problems, s.caps = has[ProblemReporter](c, s.caps, CapProblems)
	s.note, s.caps = has[ReadingNoter](c, s.caps, CapReadingNote)
	s.codec, s.caps = has[CursorCodec](c, s.caps, CapCursorCodec)
	s.tracer, s.caps = has[Tracer](c, s.caps, CapTrace)
	s.traceWriter, _ = c.(TraceWriter)
	if s.traceWriter != nil {
		s.caps |= CapTrace
	}
	return s
}

func has[T any](c Core, caps Capabilities, cap Capabilities) (T, Capabilities) {
	t, ok := c.(T)
	if ok {
		caps |= cap
	}
	return t, caps
}

// completed is a Core with its optional interfaces found (nil: missing).
type completed struct {
	Core
	caps        Capabilities
	run         RunGetter
	req         RequestGetter
	find        RunFinder
	recent      RecentRunner
	quick       QuickHeader
	ranger      StepRanger
	details     DetailReader
	fields      FieldWriter
	facts       FactReader
	activity    ActivityReader
	clock       WriteClock
	policy      PolicyReader
	reason      ReasonCarrier
	problems    ProblemReporter
	note        ReadingNoter
	codec       CursorCodec
	tracer      Tracer
	traceWriter TraceWriter
}

func (s *completed) Capabilities() Capabilities { return s.caps }

func (s *completed) Run(ctx context.Context, id string) (Run, error) {
	if s.run != nil {
		return s.run.Run(ctx, id)
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		return Run{}, err
	}
	for _, r := range runs {
		if r.ID != id {
			continue
		}
		if st, err := s.RunStats(ctx, []string{id}); err == nil {
			if v, ok := st[id]; ok {
				r.Steps, r.Tokens, r.Unreported, r.StatsKnown = v.Steps, v.Tokens, v.Unreported, true
			}
		}
		return r, nil
	}
	return Run{}, Errorf(s.Path(), ErrNoSuchRun, nil, "%s", Because(ErrNoSuchRun, id))
}

func (s *completed) Request(ctx context.Context, key RequestKey) (Request, error) {
	if s.req != nil {
		return s.req.Request(ctx, key)
	}
	reqs, err := s.Requests(ctx, false)
	if err != nil {
		return Request{}, err
	}
	for _, q := range reqs {
		if q.Key() == key {
			return q, nil
		}
	}
	return Request{}, Errorf(s.Path(), ErrNoSuchReq, nil, "%s", Because(ErrNoSuchReq, key.String()))
}

func (s *completed) HasRun(ctx context.Context, id string) (bool, error) {
	if s.find != nil {
		return s.find.HasRun(ctx, id)
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range runs {
		if r.ID == id {
			return true, nil
		}
	}
	return false, nil
}

func (s *completed) RecentRuns(ctx context.Context, limit int) ([]Run, bool, error) {
	if s.recent != nil {
		return s.recent.RecentRuns(ctx, limit)
	}
	runs, err := s.Runs(ctx)
	return runs, true, err
}

func (s *completed) HeadNewest(ctx context.Context, limit int) (Cursor, bool, error) {
	if s.quick != nil {
		return s.quick.HeadNewest(ctx, limit)
	}
	cur, err := s.Head(ctx)
	return cur, true, err
}

func (s *completed) WholeHead(ctx context.Context, cur Cursor) (Cursor, error) {
	if s.quick != nil {
		return s.quick.WholeHead(ctx, cur)
	}
	return cur, nil
}

// stepRowPage is how many rows the fallback hands fn at a time.
const stepRowPage = 512

func (s *completed) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]StepRow) error) error {
	if s.ranger != nil {
		return s.ranger.EachStepRow(ctx, runID, from, to, fn)
	}
	steps, err := s.Steps(ctx, runID)
	if err != nil {
		return err
	}
	rows := StepRowsOf(steps, from, to)
	for len(rows) > 0 {
		n := min(len(rows), stepRowPage)
		if err := fn(rows[:n:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// StepRowsOf unfolds a timeline read with Steps into its rows with
// from <= RowID <= to (to 0: every row from from on), in row order: each
// step's folded rows, then its own unless it is a pending step made of them
// (a pending step without any is its placeholder row). AppendStepRows
// folds them back into the same steps (their times aside).
func StepRowsOf(steps []Step, from, to int64) []StepRow {
	var rows []StepRow
	keep := func(r StepRow) {
		if r.RowID >= from && (to == 0 || r.RowID <= to) {
			rows = append(rows, r)
		}
	}
	for _, st := range steps {
		for _, f := range st.Retries {
			keep(StepRow{RowID: f.RowID, RunID: st.RunID, Number: st.Number, Kind: f.Kind, Decision: f.Decision})
		}
		// A pending step made of folded rows is those rows; one the format
		// shows as it stands (a turn in flight) is its placeholder row.
		if !st.Pending || len(st.Retries) == 0 {
			keep(StepRow{RowID: st.RowID, RunID: st.RunID, Number: st.Number, Kind: st.Kind, Decision: st.Decision,
				ToolCall: st.ToolCall, ResultHead: st.ResultHead, Tokens: st.Tokens, Pending: st.Pending})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].RowID < rows[j].RowID })
	return rows
}

func (s *completed) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]ProviderCall, error) {
	if s.ranger != nil {
		return s.ranger.ProviderCallsFor(ctx, runID, lo, hi)
	}
	calls, err := s.ProviderCalls(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []ProviderCall
	for _, c := range calls {
		if c.Step >= lo && c.Step <= hi {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *completed) StepDetails(ctx context.Context, runID string) ([]StepDetail, error) {
	if s.details != nil {
		return s.details.StepDetails(ctx, runID)
	}
	steps, err := s.Steps(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]StepDetail, 0, len(steps))
	for _, st := range steps {
		d, err := s.StepDetail(ctx, runID, st.RowID)
		if err != nil {
			return nil, err
		}
		d.Prompt = "" // as a DetailReader gives them: StepDetail reads one
		out = append(out, d)
	}
	return out, nil
}

func (s *completed) WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error {
	if s.fields != nil {
		return s.fields.WriteStepField(ctx, runID, rowID, field, w)
	}
	d, err := s.StepDetail(ctx, runID, rowID)
	if err != nil {
		return err
	}
	for _, cut := range d.Truncated {
		if cut == field {
			return Errorf(s.Path(), ErrUnsupported, nil, "the %s of step row %d is cut, and a %s store cannot write it whole", field, rowID, s.Format())
		}
	}
	text, ok := FieldText(d, field)
	if !ok {
		return Errorf(s.Path(), ErrUnsupported, nil, "step row %d has no field %q", rowID, field)
	}
	_, err = io.WriteString(w, text)
	return err
}

// FieldText is the text a step's detail holds for a field as FieldWriter
// names it.
func FieldText(d StepDetail, field string) (string, bool) {
	switch field {
	case "result":
		return d.Result, true
	case "prompt":
		return d.Prompt, true
	case "tool call":
		return d.ToolCallFull, true
	case "turn":
		return d.TurnText, true
	}
	for _, o := range d.Observations {
		if o.RowID != 0 && field == ObservationField(o.RowID) {
			return o.Text, true
		}
	}
	for _, e := range d.Edits {
		if e.RowID != 0 && field == EditField(e.RowID) {
			return e.Hunk, true
		}
	}
	return "", false
}

func (s *completed) RunFacts(ctx context.Context, runID string) (RunFacts, error) {
	if s.facts != nil {
		return s.facts.RunFacts(ctx, runID)
	}
	return RunFacts{RunID: runID}, nil
}

func (s *completed) Activity(ctx context.Context, q ActivityQuery) (Activity, error) {
	if s.activity != nil {
		return s.activity.Activity(ctx, q)
	}
	return Activity{}, nil
}

func (s *completed) LastWrite(ctx context.Context) (time.Time, error) {
	if s.clock != nil {
		return s.clock.LastWrite(ctx)
	}
	return time.Time{}, nil
}

func (s *completed) PolicyEvents(ctx context.Context, runID string) ([]PolicyEvent, error) {
	if s.policy != nil {
		return s.policy.PolicyEvents(ctx, runID)
	}
	return nil, nil
}

func (s *completed) CarriesReason(kind RequestKind, v Verdict) bool {
	return s.reason != nil && s.reason.CarriesReason(kind, v)
}

func (s *completed) Problems() []error {
	if s.problems != nil {
		return s.problems.Problems()
	}
	return nil
}

func (s *completed) ReadingNote() string {
	if s.note != nil {
		return s.note.ReadingNote()
	}
	return ""
}

func (s *completed) EncodeCursor(cur Cursor) ([]byte, error) {
	if s.codec != nil {
		return s.codec.EncodeCursor(cur)
	}
	return nil, s.noCodec()
}

func (s *completed) DecodeCursor(b []byte) (Cursor, error) {
	if s.codec != nil {
		return s.codec.DecodeCursor(b)
	}
	return nil, s.noCodec()
}

func (s *completed) noCodec() error {
	return Errorf(s.Path(), ErrUnsupported, nil, "a %s store's cursors cannot be written down and resumed", s.Format())
}

func (s *completed) WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error {
	switch {
	case s.traceWriter != nil:
		return s.traceWriter.WriteCanonicalTrace(ctx, runID, w)
	case s.tracer != nil:
		tr, err := s.tracer.CanonicalTrace(ctx, runID)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, tr)
		return err
	}
	return writeStepsTrace(ctx, s, runID, w)
}
