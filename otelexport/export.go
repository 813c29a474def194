package otelexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Options configure an export.
type Options struct {
	// Source is the store, opened read-only: an export never writes to it.
	Source store.Source
	// StoreID is the store's identity, from which every id is derived.
	StoreID string
	// Exporter receives the spans from the SDK's batch span processor
	// (pipeline.go); a batch counts as acknowledged when ExportSpans
	// returns nil (or an OTLP partial success). Run does not shut it down.
	Exporter sdktrace.SpanExporter
	// Endpoint names the endpoint in messages (no credentials).
	Endpoint string
	// Service is the resource's service.name.
	Service string
	// Content sends prompts, messages, tool arguments and results, goals
	// and request texts; without it only names, ids, numbers and times.
	Content bool
	// Runs limits the export to these runs and every run under them
	// (nil: every run in the store).
	Runs []string
	// Follow keeps exporting as the store grows, until ctx is done (or,
	// with Runs, until every run named and under them has ended and been
	// sent).
	Follow bool
	// Poll polls the store at this interval instead of using file events.
	Poll time.Duration
	// Ledger keeps what the endpoint acknowledged across runs; spans in
	// it are not sent again unless Resend. Nil: nothing is kept.
	Ledger *Ledger
	// Resend sends spans the ledger holds as well (same ids, same content).
	Resend bool
	// RetryFor is how long a failing batch is tried before a one-shot
	// export gives up (0: for ever), the exporter's own retries included.
	// --follow tries for ever.
	RetryFor time.Duration
	// Backoff is the wait before sending again a batch the exporter gave
	// back (after its own retries) untaken, try n (from 1); nil: 1s, 2s,
	// 4s … 30s.
	Backoff func(n int) time.Duration
	// SummaryGrace is how long --follow waits for a finished run's summary
	// before sending its span without one (default 1.5s).
	SummaryGrace time.Duration
	// Log gets one line per retry and warning; Out one line per delivery
	// (follow) or the closing summary.
	Log, Out io.Writer
	// Now is the clock run states are judged by (default time.Now);
	// waits and retries use the wall clock.
	Now func() time.Time
	// Health, when set, hears how sending goes as it goes: the error each
	// time a batch comes back untaken, nil each time one is taken (the
	// demo's status bar says an export is failing while it is).
	Health func(err error)
}

// Stats counts what an export sent.
type Stats struct {
	Spans, Agents, Calls, Tools int
	Skipped                     int // spans the ledger said the endpoint already has
	Batches, Retries            int
}

// Run exports the store and, with Follow, keeps exporting as it grows.
func Run(ctx context.Context, o Options) (Stats, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.SummaryGrace == 0 {
		o.SummaryGrace = 1500 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	b := newBuilder(o)
	e := &exporter{o: o, ids: NewIDs(o.StoreID), b: b, pipe: newPipeline(o.Exporter, b.res), runs: map[string]*runState{},
		seq: map[string]int{}, dirty: map[string]bool{}, byRun: map[string][]store.RequestKey{},
		requests: map[store.RequestKey]store.Request{}, sent: map[trace.SpanID]bool{}, finishedAt: map[string]time.Time{}}
	defer e.pipe.close()
	if o.Ledger != nil && !o.Resend {
		for id := range o.Ledger.ids {
			e.sent[id] = true
		}
	}
	e.known = func(id trace.SpanID) bool {
		if !e.sent[id] {
			return false
		}
		if o.Ledger != nil && !o.Resend && o.Ledger.ids[id] && !e.counted[id] {
			e.counted[id] = true
			e.stats.Skipped++
		}
		return true
	}
	e.counted = map[trace.SpanID]bool{}
	if !o.Follow {
		if err := e.load(ctx); err != nil {
			return e.stats, err
		}
		if err := e.settleSummaries(ctx); err != nil {
			return e.stats, err
		}
		return e.stats, e.flush(ctx, true)
	}
	return e.stats, e.follow(ctx)
}

func defaultBackoff(n int) time.Duration {
	d := time.Second << min(n-1, 5)
	return min(d, 30*time.Second)
}

// exporter is one export's state: every run it has read, folded forward.
type exporter struct {
	o     Options
	ids   IDs
	b     *builder
	pipe  *pipeline
	md    *runmodel.Model
	runs  map[string]*runState
	order []string        // runs in the order first seen, for a stable batch order
	seq   map[string]int  // a run's place in order
	dirty map[string]bool // runs something was read of since the last flush
	byRun map[string][]store.RequestKey

	requests map[store.RequestKey]store.Request
	sent     map[trace.SpanID]bool // acknowledged: spans, and rows handled
	// finishedAt is when a run was first seen ended without its summary
	// (io-harness writes the outcome and the summary in two statements).
	finishedAt map[string]time.Time
	stats      Stats
	// known reports a span already acknowledged, counting those the
	// ledger held once.
	known   func(trace.SpanID) bool
	counted map[trace.SpanID]bool
}

// row is a timeline row as the export needs it.
type row struct {
	id       int64
	number   int
	kind     store.StepKind
	toolCall string
	decision string
}

// runState is what has been read of one run.
type runState struct {
	id       string
	rows     map[int64]bool       // every row seen
	todo     []row                // turn rows not handled yet, in row order
	firstRow map[int]int64        // step number → its first turn row
	calls    []store.ProviderCall // every attempt read, in the order read
	pending  []int                // those not sent yet (indexes into calls)
	callSeen map[int64]bool
	samples  map[int]store.ContextSample
	events   []store.AgentEvent
	evSeen   map[int64]bool
	details  map[int64]store.StepDetail // turn rows read whole this cycle
}

// run is the state of run id, made on first sight; the run is marked
// dirty: the next flush looks at it.
func (e *exporter) run(id string) *runState {
	rs := e.runs[id]
	if rs == nil {
		rs = &runState{id: id, rows: map[int64]bool{}, firstRow: map[int]int64{}, callSeen: map[int64]bool{},
			samples: map[int]store.ContextSample{}, evSeen: map[int64]bool{}}
		e.runs[id] = rs
		e.seq[id] = len(e.order)
		e.order = append(e.order, id)
	}
	e.dirty[id] = true
	return rs
}

func (e *exporter) addRequest(q store.Request) {
	if _, ok := e.requests[q.Key()]; !ok {
		e.byRun[q.RunID] = append(e.byRun[q.RunID], q.Key())
	}
	e.requests[q.Key()] = q
	e.run(q.RunID)
}

func (rs *runState) addRow(r row) {
	if rs.rows[r.id] {
		return
	}
	rs.rows[r.id] = true
	if r.kind.Folds() {
		return
	}
	if _, ok := rs.firstRow[r.number]; !ok {
		rs.firstRow[r.number] = r.id
	}
	rs.todo = append(rs.todo, r)
}

func (rs *runState) addCall(c store.ProviderCall) {
	if rs.callSeen[c.RowID] {
		return
	}
	rs.callSeen[c.RowID] = true
	rs.pending = append(rs.pending, len(rs.calls))
	rs.calls = append(rs.calls, c)
}

func (rs *runState) addEvent(ev store.AgentEvent) {
	if rs.evSeen[ev.RowID] {
		return
	}
	rs.evSeen[ev.RowID] = true
	rs.events = append(rs.events, ev)
}

// inScope reports whether run id is one the export covers.
func (e *exporter) inScope(id string) bool {
	if len(e.o.Runs) == 0 {
		return true
	}
	for _, r := range e.o.Runs {
		if e.md.Within(id, r) {
			return true
		}
	}
	return false
}

// load reads everything the store holds now.
func (e *exporter) load(ctx context.Context) error {
	src := e.o.Source
	md, err := runmodel.Load(ctx, src, e.o.Now())
	if err != nil {
		return err
	}
	e.md = md
	for _, id := range e.o.Runs {
		if _, ok := md.Run(id); !ok {
			return store.Errorf(src.Path(), store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
		}
	}
	var ids []string
	for _, id := range md.Newest() {
		if e.inScope(id) {
			ids = append(ids, id)
		}
	}
	slices.Reverse(ids) // oldest first
	for _, id := range ids {
		rs := e.run(id)
		if e.sent[e.ids.Agent(id)] {
			// The endpoint acknowledged the run's own span, which goes last
			// (a batch after its steps'): nothing of the run is left to send,
			// and its rows need not be read.
			continue
		}
		if err := e.loadRun(ctx, rs); err != nil {
			var se *store.Error
			if ctx.Err() != nil || !errors.As(err, &se) {
				return err
			}
			// A run the store cannot read (a damaged journal): its own span
			// still goes, with what its run row says; its steps cannot.
			if !src.Capabilities().Has(store.CapProblems) { // else said with the store's problems
				fmt.Fprintf(e.o.Log, "vigil: warning: run %s: %s\n", sanitize.Line(id), oneLine(err))
			}
		}
	}
	return e.loadShared(ctx, ids)
}

// loadRun reads one run's rows, calls and context samples.
func (e *exporter) loadRun(ctx context.Context, rs *runState) error {
	src, id := e.o.Source, rs.id
	steps, err := src.Steps(ctx, id)
	if err != nil {
		return err
	}
	for _, st := range steps {
		for _, r := range st.Retries {
			rs.addRow(row{id: r.RowID, number: st.Number, kind: r.Kind, decision: r.Decision})
		}
		if !st.Pending {
			rs.addRow(row{id: st.RowID, number: st.Number, kind: st.Kind, toolCall: st.ToolCall, decision: st.Decision})
		}
	}
	calls, err := src.ProviderCalls(ctx, id)
	if err != nil {
		return err
	}
	for _, c := range calls {
		rs.addCall(c)
	}
	samples, err := src.ContextSamples(ctx, id)
	if err != nil {
		return err
	}
	for _, s := range samples {
		rs.samples[s.Step] = s
	}
	return nil
}

// loadShared reads the requests and tree events of the runs ids.
func (e *exporter) loadShared(ctx context.Context, ids []string) error {
	src := e.o.Source
	var scoped []string
	if len(e.o.Runs) > 0 {
		scoped = ids
	}
	if len(ids) == 0 {
		return nil
	}
	reqs, err := src.Requests(ctx, false, scoped...)
	if err != nil {
		return err
	}
	for _, q := range reqs {
		e.addRequest(q)
	}
	evs, err := src.AgentEvents(ctx, scoped...)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		e.run(ev.RunID).addEvent(ev)
	}
	return nil
}

// apply folds one refresh in.
func (e *exporter) apply(ch *store.Changes) {
	e.md.Apply(ch, e.o.Now())
	for _, r := range ch.Runs {
		e.run(r.ID)
	}
	for _, c := range ch.Calls {
		e.run(c.RunID).addCall(c)
	}
	for _, r := range ch.Steps {
		if r.Pending {
			continue // a step in flight: its committed row follows (loadRun skips it alike)
		}
		e.run(r.RunID).addRow(row{id: r.RowID, number: r.Number, kind: r.Kind, toolCall: r.ToolCall, decision: r.Decision})
	}
	for _, s := range ch.Context {
		e.run(s.RunID).samples[s.Step] = s
	}
	for _, q := range ch.Requests {
		e.addRequest(q)
	}
	for _, ev := range ch.AgentEvents {
		e.run(ev.RunID).addEvent(ev)
	}
}

// ended reports whether a run has finished (a run parked on a human has
// not: it may go on).
func ended(r store.Run) bool {
	return store.StateOf(r, nil, false, false, time.Time{}) == store.StateFinished
}

// agentReady reports whether run id's invoke_agent span can be built: the
// run has ended and its summary is in (or, following, did not come within
// the grace).
func (e *exporter) agentReady(r store.Run, final bool) bool {
	if !ended(r) {
		return false
	}
	if r.Summary != nil || final {
		return true
	}
	since, ok := e.finishedAt[r.ID]
	if !ok {
		e.finishedAt[r.ID] = time.Now()
		return false
	}
	return time.Since(since) >= e.o.SummaryGrace
}

// settleSummaries re-reads, once, the runs that have ended without a
// summary, so a one-shot export does not catch io-harness between its two
// statements.
func (e *exporter) settleSummaries(ctx context.Context) error {
	var missing []string
	for _, id := range e.order {
		if r, ok := e.md.Run(id); ok && ended(r) && r.Summary == nil && e.inScope(id) && !e.sent[e.ids.Agent(id)] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	g := e.o.Source
	if !g.Capabilities().Has(store.CapRun) {
		return nil // each run read alone would read them all
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(100 * time.Millisecond):
	}
	var runs []store.Run
	for _, id := range missing {
		r, err := g.Run(ctx, id)
		if err != nil {
			continue // the run as listed stands
		}
		runs = append(runs, r)
	}
	e.md.Apply(&store.Changes{Runs: runs}, e.o.Now())
	for _, r := range runs {
		e.run(r.ID)
	}
	return nil
}

// pending is one batch being built: spans, and the ids that mark what
// they cover.
type pending struct {
	spans []spanValue
	ids   map[trace.SpanID]bool
	marks []trace.SpanID // rows handled (no span of their own)
	size  int
	kinds Stats
}

const (
	maxBatchSpans = 512
	maxBatchBytes = 2 << 20
)

// flush builds every span that is ready and not yet acknowledged, and
// sends them in batches. final says the export ends after this (a one-shot
// export, or a run ending): a finished run without a summary is sent as it
// is, and calls of steps that never committed go with their run's span.
func (e *exporter) flush(ctx context.Context, final bool) error {
	var p pending
	send := func() error {
		if len(p.spans) == 0 && len(p.marks) == 0 {
			return nil
		}
		err := e.send(ctx, &p)
		p = pending{}
		return err
	}
	ids := make([]string, 0, len(e.dirty))
	for id := range e.dirty {
		ids = append(ids, id)
	}
	clear(e.dirty)
	slices.SortFunc(ids, func(a, b string) int { return e.seq[a] - e.seq[b] })
	for _, id := range ids {
		if !e.inScope(id) {
			continue
		}
		r, ok := e.md.Run(id)
		if !ok {
			continue
		}
		rs := e.runs[id]
		if err := e.build(ctx, r, rs, final, &p); err != nil {
			return err
		}
		if len(p.spans) >= maxBatchSpans || p.size >= maxBatchBytes {
			if err := send(); err != nil {
				return err
			}
		}
	}
	return send()
}

// build adds a run's ready spans to p.
func (e *exporter) build(ctx context.Context, r store.Run, rs *runState, final bool, p *pending) error {
	ctxSpan := e.b.runContext(e.md, r)
	// Tool calls, as their rows commit.
	for _, tr := range rs.todo {
		mark := e.ids.row(r.ID, tr.id)
		if e.sent[mark] {
			continue
		}
		if tr.toolCall != "" || e.o.Content {
			d, err := e.detail(ctx, rs, tr)
			if err != nil {
				return err
			}
			for i, tc := range d.Tools {
				id := e.ids.Tool(r.ID, tr.id, i)
				if e.known(id) {
					continue
				}
				at := e.b.toolTime(rs, tr, d, ctxSpan)

				s := e.b.toolSpan(ctxSpan, tr, d, i, tc, id, at)
				p.add(s)
				p.kinds.Tools++
			}
		}
		p.marks = append(p.marks, mark)
	}
	rs.todo = rs.todo[:0] // every row is in p now, or was sent before
	agentReady := e.agentReady(r, final)
	// Provider calls, once their step has committed (the turn's counts are
	// in by then), or with the run's own span.
	waiting := rs.pending[:0]
	for _, i := range rs.pending {
		c := rs.calls[i]
		id := e.ids.Call(r.ID, c.RowID)
		if e.known(id) || p.has(id) {
			continue
		}
		first, committed := rs.firstRow[c.Step]
		if !committed && !agentReady {
			waiting = append(waiting, i)
			continue
		}
		var d *store.StepDetail
		if e.o.Content && committed && c.Failure == "" {
			dd, err := e.detail(ctx, rs, row{id: first, number: c.Step})
			if err != nil {
				return err
			}
			d = &dd
		}
		sample, hasSample := rs.samples[c.Step]
		p.add(e.b.chatSpan(ctxSpan, c, id, d, sample, hasSample))
		p.kinds.Calls++
	}
	rs.pending = waiting
	if agentReady && !e.known(e.ids.Agent(r.ID)) && !p.has(e.ids.Agent(r.ID)) {
		var reqs []store.Request
		for _, k := range e.byRun[r.ID] {
			reqs = append(reqs, e.requests[k])
		}
		p.add(e.b.agentSpan(ctxSpan, r, e.md, rs, reqs))
		p.kinds.Agents++
	}
	rs.details = nil
	return nil
}

// detail reads a turn row whole, once a cycle.
func (e *exporter) detail(ctx context.Context, rs *runState, tr row) (store.StepDetail, error) {
	if d, ok := rs.details[tr.id]; ok {
		return d, nil
	}
	d, err := e.o.Source.StepDetail(ctx, rs.id, tr.id)
	if err != nil {
		if errors.Is(err, store.ErrNoSuchRun) {
			// A row the store no longer holds (a damaged journal): nothing to send.
			return store.StepDetail{}, nil
		}
		return store.StepDetail{}, err
	}
	if rs.details == nil {
		rs.details = map[int64]store.StepDetail{}
	}
	rs.details[tr.id] = d
	return d, nil
}

func (p *pending) add(s spanValue) {
	if p.ids == nil {
		p.ids = map[trace.SpanID]bool{}
	}
	p.ids[s.SpanContext.SpanID()] = true
	p.spans = append(p.spans, s)
	p.size += spanSize(s)
}

func (p *pending) has(id trace.SpanID) bool { return p.ids[id] }

// send exports one batch through the SDK and then records it. The
// exporter retries what it holds to be passing (a throttled or unavailable
// endpoint) itself; what it gives back untaken (a refused connection, which
// the OTLP/HTTP exporter does not retry, or its retries running out) is
// sent again with back-off until the endpoint takes it (or, one-shot,
// until RetryFor runs out). Ids are the store's, so a batch sent again
// whose first reply was lost reaches the endpoint twice under the same ids.
func (e *exporter) send(ctx context.Context, p *pending) error {
	if len(p.spans) > 0 {
		waiting := p.spans
		start := time.Now() // the wall clock: Now may be a test's fixed one
		retryFrom := start  // when the first try ended: RetryFor runs from there
		for attempt := 1; ; attempt++ {
			for i := range waiting {
				e.pipe.emit(waiting[i])
			}
			fctx, cancel := ctx, context.CancelFunc(func() {})
			if !e.o.Follow && e.o.RetryFor > 0 && attempt > 1 { // the first try is the exporter's own
				fctx, cancel = context.WithDeadline(ctx, retryFrom.Add(e.o.RetryFor))
			}
			took, err, partial := e.pipe.flush(fctx)
			cancel()
			if attempt == 1 {
				retryFrom = time.Now()
			}
			for _, perr := range partial {
				fmt.Fprintf(e.o.Log, "vigil: otel: %s took the batch only in part: %s\n", e.o.Endpoint, oneLine(perr))
			}
			left := waiting[:0:0]
			for _, s := range waiting {
				if !took[s.SpanContext.SpanID()] {
					left = append(left, s)
				}
			}
			if waiting = left; len(waiting) == 0 {
				if e.o.Health != nil {
					e.o.Health(nil)
				}
				if attempt > 1 {
					fmt.Fprintf(e.o.Log, "vigil: otel: %s took the batch after %d attempts (%s)\n", e.o.Endpoint, attempt,
						time.Since(start).Round(100*time.Millisecond))
				}
				break
			}
			if err == nil {
				err = errors.New("the batch was not acknowledged")
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// A back-off that would end past the window is not waited: the
			// next try could not begin inside it (the window starts with the
			// first try, whose own length does not count against it).
			wait := e.o.Backoff(attempt)
			if !e.o.Follow && e.o.RetryFor > 0 && time.Since(retryFrom)+wait > e.o.RetryFor {
				return fmt.Errorf("%s: gave up after %d attempts over %s: %s", e.o.Endpoint, attempt,
					time.Since(start).Round(time.Second), oneLine(err))
			}
			e.stats.Retries++
			if e.o.Health != nil {
				e.o.Health(err)
			}
			fmt.Fprintf(e.o.Log, "vigil: otel: %s: %s; retrying in %s (attempt %d, %d spans waiting)\n",
				e.o.Endpoint, oneLine(err), wait, attempt, len(waiting))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		e.stats.Batches++
	}
	ids := make([]trace.SpanID, 0, len(p.spans)+len(p.marks))
	for i := range p.spans {
		ids = append(ids, p.spans[i].SpanContext.SpanID())
	}
	ids = append(ids, p.marks...)
	for _, id := range ids {
		e.sent[id] = true
	}
	e.stats.Spans += len(p.spans)
	e.stats.Agents += p.kinds.Agents
	e.stats.Calls += p.kinds.Calls
	e.stats.Tools += p.kinds.Tools
	if e.o.Ledger != nil {
		if err := e.o.Ledger.Add(ids); err != nil {
			return err
		}
	}
	if e.o.Follow && len(p.spans) > 0 {
		fmt.Fprintf(e.o.Out, "sent %d spans (%d agents, %d model calls, %d tool calls) to %s\n",
			len(p.spans), p.kinds.Agents, p.kinds.Calls, p.kinds.Tools, e.o.Endpoint)
	}
	return nil
}

func isPartialSuccess(err error) bool {
	return strings.Contains(err.Error(), "OTLP partial success")
}

// oneLine is an error as one safe line: an endpoint's reply is untrusted.
func oneLine(err error) string {
	s := sanitize.Line(err.Error())
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// follow exports what is there, then what is committed, until ctx is done.
func (e *exporter) follow(ctx context.Context) error {
	src := e.o.Source
	spec := src.Watch()
	w, err := watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Touched: spec.Touched, Depth: spec.Depth, Poll: e.o.Poll})
	if err != nil {
		return fmt.Errorf("%s: cannot watch the store: %w", src.Path(), err)
	}
	defer w.Close()
	cur, err := src.Head(ctx)
	if err != nil {
		return quiet(ctx, err)
	}
	if err := e.load(ctx); err != nil {
		return quiet(ctx, err)
	}
	if err := e.flush(ctx, false); err != nil {
		return quiet(ctx, err)
	}
	var grace <-chan time.Time
	for {
		if e.done() {
			return nil
		}
		if grace == nil && e.waitingSummary() {
			grace = time.After(e.o.SummaryGrace / 3)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-grace:
			grace = nil
			e.rereadUnsummarised(ctx)
			if err := e.flush(ctx, false); err != nil {
				return quiet(ctx, err)
			}
		case sig, ok := <-w.C():
			if !ok {
				return nil
			}
			switch sig.Kind {
			case watch.Changed:
				var found bool
				found, cur, err = e.refresh(ctx, cur)
				w.Ack(found)
				if err != nil {
					return quiet(ctx, err)
				}
				if found {
					if err := e.flush(ctx, false); err != nil {
						return quiet(ctx, err)
					}
				}
			case watch.Gone:
				return fmt.Errorf("%s: the store was deleted while exporting", src.Path())
			case watch.Replaced:
				return fmt.Errorf("%s: the store was replaced while exporting", src.Path())
			case watch.ModeChanged:
				fmt.Fprintln(e.o.Log, "vigil: "+sanitize.Line(sig.Reason))
			}
		}
	}
}

// refresh reads every page of what changed and folds it in.
func (e *exporter) refresh(ctx context.Context, cur store.Cursor) (bool, store.Cursor, error) {
	found := false
	for {
		ch, next, err := e.o.Source.Changes(ctx, cur)
		if err != nil {
			return found, cur, err
		}
		cur = next
		if ch.Reset {
			return found, cur, fmt.Errorf("%s: the store was replaced while exporting", e.o.Source.Path())
		}
		found = found || !ch.Empty()
		e.apply(ch)
		if !ch.More {
			return found, cur, nil
		}
	}
}

// waitingSummary reports a run that has ended without its summary and
// whose span is not sent.
func (e *exporter) waitingSummary() bool {
	for id := range e.finishedAt {
		if !e.sent[e.ids.Agent(id)] {
			return true
		}
	}
	return false
}

// rereadUnsummarised reads again the runs that ended without a summary.
func (e *exporter) rereadUnsummarised(ctx context.Context) {
	g := e.o.Source
	if !g.Capabilities().Has(store.CapRun) {
		return
	}
	var runs []store.Run
	for id := range e.finishedAt {
		if e.sent[e.ids.Agent(id)] {
			continue
		}
		if r, err := g.Run(ctx, id); err == nil && r.Summary != nil {
			runs = append(runs, r)
		}
	}
	if len(runs) > 0 {
		e.md.Apply(&store.Changes{Runs: runs}, e.o.Now())
	}
	for id := range e.finishedAt {
		e.run(id) // looked at again: sent now if the grace is over
	}
}

// done reports, for an export of named runs, that every run in their trees
// has ended and been sent.
func (e *exporter) done() bool {
	if len(e.o.Runs) == 0 {
		return false
	}
	for _, id := range e.o.Runs {
		for _, sub := range e.md.Subtree(id) {
			if !e.sent[e.ids.Agent(sub)] {
				return false
			}
		}
	}
	return true
}

// quiet turns an error caused by Ctrl-C into a clean stop.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}
