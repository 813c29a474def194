package otelexport

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// The span model (docs/cli.md has it for users):
//
//	trace                       one per root run (its whole tree)
//	  invoke_agent {name}       one per run, under its parent run's span;
//	                            sent when the run ends
//	    chat {model}            one per provider attempt, failed ones too
//	    execute_tool {tool}     one per tool call of a model turn
//	    invoke_agent {child}    …
//
// Spans are built as values (spanValue) and then recorded through the
// SDK's Tracer (pipeline.go): every id and time comes from the store, none
// from the clock or a random source, so the same store rows always make
// the same span.

// minDuration is how long a span lasts whose store gives it no duration
// (a tool call: the stores keep no tool timing vigil reads).
const minDuration = time.Microsecond

// builder makes spans; it holds what every span of an export shares.
type builder struct {
	ids     IDs
	res     *resource.Resource
	content bool
}

func newBuilder(o Options) *builder {
	service := o.Service
	if service == "" {
		service = "vigil"
	}
	format := ""
	if o.Source != nil {
		format = o.Source.Format()
	}
	return &builder{
		ids:     NewIDs(o.StoreID),
		res:     resource.NewSchemaless(keyServiceName.String(service), keyStoreFormat.String(format)),
		content: o.Content,
	}
}

// runCtx is what every span of one run shares.
type runCtx struct {
	run          store.Run
	root         string
	parent       string // the parent in the forest ("" for a root)
	trace        trace.TraceID
	agent        trace.SpanID // the run's invoke_agent span
	conversation string
	fallback     time.Time // a time for what the store did not time
}

func (b *builder) runContext(md *runmodel.Model, r store.Run) runCtx {
	root := md.RootOf(r.ID)
	c := runCtx{run: r, root: root, parent: md.Parent(r.ID), trace: b.ids.Trace(root), agent: b.ids.Agent(r.ID),
		conversation: b.ids.Conversation(root)}
	c.fallback = r.StartedAt
	if c.fallback.IsZero() {
		if rr, ok := md.Run(root); ok {
			c.fallback = rr.StartedAt
		}
	}
	if c.fallback.IsZero() {
		c.fallback = time.Unix(0, 0)
	}
	return c
}

// spanValue is one span as the store makes it, whole: what emit records
// through the SDK's Tracer.
type spanValue struct {
	Name                string
	SpanContext, Parent trace.SpanContext
	SpanKind            trace.SpanKind
	StartTime, EndTime  time.Time
	Attributes          []attribute.KeyValue
	Events              []sdktrace.Event
	Status              sdktrace.Status
}

func (b *builder) stub(c runCtx, name string, kind trace.SpanKind, id trace.SpanID, parent trace.SpanID, start, end time.Time) spanValue {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: c.trace, SpanID: id, TraceFlags: trace.FlagsSampled})
	var pc trace.SpanContext
	if parent.IsValid() {
		pc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: c.trace, SpanID: parent, TraceFlags: trace.FlagsSampled})
	}
	if !end.After(start) {
		// A span must last: backends read an end at its start as a
		// negative duration (Jaeger rewrites the span and adds a warning,
		// so a re-export would no longer be the same span).
		end = start.Add(minDuration)
	}
	return spanValue{Name: name, SpanContext: sc, Parent: pc, SpanKind: kind, StartTime: start, EndTime: end}
}

// common are the attributes on every span of a run.
func (b *builder) common(c runCtx) []attribute.KeyValue {
	return []attribute.KeyValue{
		keyConversationID.String(c.conversation),
		keyRunID.String(text(c.run.ID)),
	}
}

// agentName is what names a run's agent: the first line of its goal with
// --content, else the run's id (a goal is what a person asked for).
func (b *builder) agentName(r store.Run) string {
	if b.content {
		line, _, _ := strings.Cut(strings.TrimSpace(r.Goal), "\n")
		if line = cutRunes(name(line), 64); line != "" {
			return line
		}
	}
	return "run " + name(store.DisplayID(r.ID))
}

// agentSpan is a run's invoke_agent span.
func (b *builder) agentSpan(c runCtx, r store.Run, md *runmodel.Model, rs *runState, reqs []store.Request) spanValue {
	var calls []store.ProviderCall
	var events []store.AgentEvent
	var samples []store.ContextSample
	if rs != nil {
		calls, events = rs.calls, rs.events
		for _, s := range rs.samples {
			samples = append(samples, s)
		}
		slices.SortFunc(samples, func(a, b store.ContextSample) int { return a.Step - b.Step })
	}
	start, end := r.StartedAt, time.Time{}
	var first, last time.Time
	for _, cl := range calls {
		s, e := callTimes(cl, c.fallback)
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if e.After(last) {
			last = e
		}
	}
	if start.IsZero() || (!first.IsZero() && first.Before(start)) {
		// The span covers everything recorded of the run: a store stamps
		// in whole seconds, and an attempt's start is its end less its
		// latency.
		start = first
	}
	if sm := r.Summary; sm != nil {
		switch {
		case !sm.FinishedAt.IsZero():
			end = sm.FinishedAt
		case sm.HasDuration && !start.IsZero():
			end = start.Add(sm.Duration)
		}
	}
	if end.IsZero() || last.After(end) {
		end = last
	}

	if start.IsZero() {
		start = c.fallback
	}
	if end.IsZero() {
		end = start
	}
	var parent trace.SpanID
	if c.parent != "" {
		parent = b.ids.Agent(c.parent)
	}
	agentName := b.agentName(r)
	s := b.stub(c, operationInvokeAgent+" "+agentName, trace.SpanKindInternal, c.agent, parent, start, end)
	a := append(b.common(c),
		keyOperationName.String(operationInvokeAgent),
		keyAgentID.String(text(r.ID)),
		keyAgentName.String(agentName),
		keyRunRootID.String(text(c.root)),
		keyRunDepth.Int(r.Depth),
		keyRunStatus.String(name(string(r.Status))),
	)
	if r.Provider != "" {
		a = append(a, keyProviderName.String(name(r.Provider)))
	}
	if c.parent != "" {
		a = append(a, keyRunParentID.String(text(c.parent)))
	}
	outcome := r.Outcome
	if r.Summary != nil && r.Summary.Outcome != "" {
		outcome = r.Summary.Outcome
	}
	if outcome != "" {
		a = append(a, keyRunOutcome.String(name(string(outcome))))
	}
	if r.Summary != nil {
		a = append(a, keyRunSuccess.Bool(r.Summary.Success), keyAgentSteps.Int(r.Summary.Steps), keyAgentTokens.Int64(r.Summary.Tokens))
	} else if own := md.Agent(r.ID); own.Known {
		a = append(a, keyRunSuccess.Bool(outcome.Succeeded()), keyAgentSteps.Int(own.Steps), keyAgentTokens.Int64(own.Tokens))
	}
	if b.content && r.Goal != "" {
		a = append(a, keyRunGoal.String(content(r.Goal)), keyAgentDescription.String(content(r.Goal)))
	}
	if len(samples) > 0 {
		d := runmodel.ComputeDrift(samples)
		a = append(a, keyContextTurns.Int(d.Turns), keyContextMissing.Int(d.Missing))
		if d.HasReported {
			a = append(a, keyContextEstimated.Int64(d.SumEst), keyContextReported.Int64(d.SumReported),
				keyContextGap.Int64(d.SumGap), keyContextDrift.Float64(d.Cumulative))
		}
	}
	if failed(r.Status, outcome) {
		s.Status = sdktrace.Status{Code: codes.Error, Description: "the run ended " + name(string(outcome))}
		a = append(a, keyErrorType.String(orOther(name(string(outcome)))))
	}
	s.Attributes = a
	s.Events = b.requestEvents(c, reqs, calls, end)
	for _, ev := range events {
		if ev.Kind != store.AgentSpawnRefused {
			continue
		}
		at := stepTime(calls, ev.Step, start)
		s.Events = append(s.Events, sdktrace.Event{Name: eventSpawnRefused, Time: at, Attributes: []attribute.KeyValue{
			keyStepNumber.Int(ev.Step), keySpawnDetail.String(cutRunes(name(ev.Detail), 200))}})
	}
	slices.SortStableFunc(s.Events, func(x, y sdktrace.Event) int { return x.Time.Compare(y.Time) })
	return s
}

// failed reports a run that ended in an error (not one stopped by a limit
// or a person).
func failed(st store.Status, o store.Outcome) bool {
	return st == store.StatusFailed || o == store.OutcomeFailed || o == store.OutcomeError || o == store.OutcomeUnreadable
}

// requestEvents are a run's approvals, questions and plans as events: when
// each was asked, what was decided, and how long the run waited — from
// the asking to the run's next provider call (or its end).
func (b *builder) requestEvents(c runCtx, reqs []store.Request, calls []store.ProviderCall, end time.Time) []sdktrace.Event {
	slices.SortFunc(reqs, func(x, y store.Request) int {
		if x.Step != y.Step {
			return x.Step - y.Step
		}
		if x.Kind != y.Kind {
			return int(x.Kind) - int(y.Kind)
		}
		return strings.Compare(x.ID, y.ID)
	})
	var out []sdktrace.Event
	for _, q := range reqs {
		asked := q.AskedAt
		if asked.IsZero() {
			asked = stepEnd(calls, q.Step, c.fallback)
		}
		resumed, wentOn := time.Time{}, false
		for _, cl := range calls {
			s, _ := callTimes(cl, c.fallback)
			if cl.Step > q.Step && !s.Before(asked) && (resumed.IsZero() || s.Before(resumed)) {
				resumed, wentOn = s, true
			}
		}
		if resumed.IsZero() {
			resumed = end
		}
		wait := resumed.Sub(asked)
		if wait < 0 {
			wait = 0
		}
		a := []attribute.KeyValue{
			keyRequestKind.String(q.Kind.String()),
			keyRequestID.String(text(q.ID)),
			keyRequestStep.Int(q.Step),
			keyRequestWaitMS.Int64(wait.Milliseconds()),
			keyRequestResumed.Bool(wentOn),
		}
		decision := "undecided"
		if q.Resolved {
			decision = "decided"
			if q.Kind != store.Question && q.Decision != "" {
				decision = cutRunes(name(q.Decision), 64)
			} else if q.Kind == store.Question {
				decision = "answered"
			}
		}
		a = append(a, keyRequestDecision.String(decision))
		if q.DecidedBy != "" {
			a = append(a, keyRequestDecidedBy.String(cutRunes(name(q.DecidedBy), 64)))
		}
		ev := eventApproval
		switch q.Kind {
		case store.Approval:
			if q.Act != "" {
				a = append(a, keyRequestAct.String(name(q.Act)))
			}
			if b.content {
				a = append(a, keyRequestTarget.String(content(q.Target)))
				if q.HasContent {
					a = append(a, keyRequestContent.String(content(q.Content)))
				}
			}
		case store.Question:
			ev = eventQuestion
			if b.content {
				a = append(a, keyRequestQuestion.String(content(q.Question)))
				if q.Resolved {
					a = append(a, keyRequestAnswer.String(content(q.Decision)))
				}
			}
		case store.Plan:
			ev = eventPlan
			a = append(a, keyRequestPlanSteps.Int(len(q.PlanSteps)))
			if b.content {
				var lines []string
				for _, st := range q.PlanSteps {
					lines = append(lines, st.Intent)
				}
				a = append(a, keyRequestPlan.String(content(strings.Join(lines, "\n"))))
				if q.Correction != "" {
					a = append(a, keyRequestCorrect.String(content(q.Correction)))
				}
			}
		}
		out = append(out, sdktrace.Event{Name: ev, Time: asked, Attributes: a})
	}
	return out
}

// chatSpan is one provider attempt.
func (b *builder) chatSpan(c runCtx, cl store.ProviderCall, id trace.SpanID, d *store.StepDetail, sample store.ContextSample, hasSample bool) spanValue {
	start, end := callTimes(cl, c.fallback)
	spanName := operationChat
	if cl.Model != "" {
		spanName += " " + name(cl.Model)
	}
	s := b.stub(c, spanName, trace.SpanKindClient, id, c.agent, start, end)
	a := append(b.common(c), keyOperationName.String(operationChat), keyStepNumber.Int(cl.Step), keyCallAttempt.Int(cl.Attempt))
	provider := cl.Provider
	if provider == "" {
		provider = c.run.Provider
	}
	if provider != "" {
		a = append(a, keyProviderName.String(name(provider)))
	}
	if cl.Model != "" {
		a = append(a, keyRequestModel.String(name(cl.Model)))
	}
	for _, t := range []struct {
		k attribute.Key
		v *int64
	}{{keyUsageInputTokens, cl.PromptTokens}, {keyUsageOutputTokens, cl.CompletionTokens}, {keyUsageCacheRead, cl.CacheReadTokens},
		{keyUsageCacheCreation, cl.CacheWriteTokens}, {keyUsageReasoning, cl.ReasoningTokens}, {keyCallTotal, cl.TotalTokens}} {
		if t.v != nil {
			a = append(a, t.k.Int64(*t.v))
		}
	}
	if cl.FinishReason != "" {
		a = append(a, keyResponseFinish.StringSlice([]string{name(cl.FinishReason)}))
	}
	if cl.TTFTMS != nil {
		a = append(a, keyResponseFirstChunk.Float64(float64(*cl.TTFTMS)/1000))
	}
	if cl.Failure != "" {
		s.Status = sdktrace.Status{Code: codes.Error, Description: cutRunes(name(cl.Failure), 256)}
		a = append(a, keyErrorType.String(errorType(cl.Failure)), keyCallFailure.String(cutRunes(name(cl.Failure), 256)))
	} else if hasSample {
		a = append(a, sampleAttrs(sample)...)
	}
	if d != nil && b.content {
		if d.Prompt != "" {
			a = append(a, keyInputMessages.String(messages("user", d.Prompt, nil, "")))
		}
		if (d.HasTurnText && d.TurnText != "") || len(d.Tools) > 0 {
			a = append(a, keyOutputMessages.String(messages("assistant", d.TurnText, d.Tools, cl.FinishReason)))
		}
	}
	s.Attributes = a
	return s
}

// sampleAttrs are a turn's context sample: the estimate, the provider's
// count, and the drift between them (only when both are known).
func sampleAttrs(s store.ContextSample) []attribute.KeyValue {
	var a []attribute.KeyValue
	if !s.NoEstimate {
		a = append(a, keyContextEstimated.Int64(s.Estimated))
	}
	if s.Reported != nil {
		a = append(a, keyContextReported.Int64(*s.Reported))
		if !s.NoEstimate {
			gap := *s.Reported - s.Estimated
			a = append(a, keyContextGap.Int64(gap))
			if *s.Reported != 0 {
				a = append(a, keyContextDrift.Float64(float64(gap)/float64(*s.Reported)))
			}
		}
	}
	return a
}

// toolTime is when a turn's tool calls were made: the row's own time, else
// the end of its step's last provider call. The stores keep no tool
// timing vigil reads, so a tool span has no duration.
func (b *builder) toolTime(rs *runState, tr row, d store.StepDetail, c runCtx) time.Time {
	if !d.At.IsZero() {
		return d.At
	}
	return stepEnd(rs.calls, tr.number, c.fallback)
}

// toolSpan is the i-th tool call of a turn row.
func (b *builder) toolSpan(c runCtx, tr row, d store.StepDetail, i int, tc store.ToolCall, id trace.SpanID, at time.Time) spanValue {
	toolName := name(tc.Name)
	spanName := operationExecuteTool
	if toolName != "" {
		spanName += " " + toolName
	}
	s := b.stub(c, spanName, trace.SpanKindInternal, id, c.agent, at, at.Add(minDuration))
	a := append(b.common(c), keyOperationName.String(operationExecuteTool), keyToolType.String(toolTypeFunction),
		keyStepNumber.Int(tr.number))
	if toolName != "" {
		a = append(a, keyToolName.String(toolName))
	}
	if tc.ID != "" {
		a = append(a, keyToolCallID.String(text(tc.ID)))
	}
	if b.content {
		if tc.Arguments != "" {
			a = append(a, keyToolCallArguments.String(content(tc.Arguments)))
		}
		if len(d.Tools) == 1 && d.Result != "" {
			a = append(a, keyToolCallResult.String(content(d.Result)))
		}
		if d.Decision != "" {
			a = append(a, keyStepDecision.String(content(d.Decision)))
		}
	}
	s.Attributes = a
	return s
}

// callTimes are an attempt's start and end: the store records when the
// attempt was logged (its end) and how long it took.
func callTimes(c store.ProviderCall, fallback time.Time) (time.Time, time.Time) {
	end := c.At
	if end.IsZero() {
		end = fallback
	}
	return end.Add(-time.Duration(c.LatencyMS) * time.Millisecond), end
}

// stepEnd is when a step's last provider attempt ended.
func stepEnd(calls []store.ProviderCall, step int, fallback time.Time) time.Time {
	var t time.Time
	for _, c := range calls {
		if c.Step == step {
			if _, e := callTimes(c, fallback); e.After(t) {
				t = e
			}
		}
	}
	if t.IsZero() {
		return fallback
	}
	return t
}

// stepTime is when a step began: its first provider attempt's start.
func stepTime(calls []store.ProviderCall, step int, fallback time.Time) time.Time {
	var t time.Time
	for _, c := range calls {
		if c.Step == step {
			if s, _ := callTimes(c, fallback); t.IsZero() || s.Before(t) {
				t = s
			}
		}
	}
	if t.IsZero() {
		return fallback
	}
	return t
}

var httpStatus = regexp.MustCompile(`\b(?:HTTP|status)[ :]*([1-5][0-9][0-9])\b`)

// errorType is a failure as a low-cardinality class: its HTTP status when
// it names one, else its first word, else _OTHER.
func errorType(failure string) string {
	if m := httpStatus.FindStringSubmatch(failure); m != nil {
		return m[1]
	}
	f := strings.FieldsFunc(failure, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if len(f) > 0 && len(f[0]) <= 40 {
		return f[0]
	}
	return errorTypeOther
}

func orOther(s string) string {
	if s == "" {
		return errorTypeOther
	}
	return s
}

// messages is a GenAI message list (the conventions' JSON schema) as a
// JSON string: one message of role with its text and tool calls.
func messages(role, txt string, tools []store.ToolCall, finish string) string {
	type part struct {
		Type      string `json:"type"`
		Content   string `json:"content,omitempty"`
		ID        string `json:"id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments any    `json:"arguments,omitempty"`
	}
	type message struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	m := message{Role: role, FinishReason: name(finish)}
	if txt != "" {
		// Raw in the JSON: encoding/json escapes its C0 controls and
		// escapeJSONHazards the rest, each once.
		m.Parts = append(m.Parts, part{Type: "text", Content: strings.ToValidUTF8(txt, "\uFFFD")})
	}
	for _, t := range tools {
		p := part{Type: "tool_call", ID: text(t.ID), Name: name(t.Name)}
		if t.Arguments != "" {
			if json.Valid([]byte(t.Arguments)) {
				p.Arguments = json.RawMessage(t.Arguments)
			} else {
				p.Arguments = strings.ToValidUTF8(t.Arguments, "\uFFFD")
			}
		}
		m.Parts = append(m.Parts, p)
	}
	if m.Parts == nil {
		m.Parts = []part{}
	}
	out, err := json.Marshal([]message{m})
	if err != nil {
		return "[]"
	}
	return escapeJSONHazards(out)
}

// Strings from a store are untrusted. A name or an id (span names, short
// attributes) is made one printable line; content is sent as the store
// holds it with its controls escaped (escape.go).

func name(s string) string { return strings.TrimSpace(sanitize.Line(s)) }

func text(s string) string { return sanitize.Line(s) }

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// spanSize is a span's rough encoded size, for batching.
func spanSize(s spanValue) int {
	n := 200 + len(s.Name)
	for _, a := range s.Attributes {
		n += len(a.Key) + len(a.Value.Emit())
	}
	for _, ev := range s.Events {
		n += 50
		for _, a := range ev.Attributes {
			n += len(a.Key) + len(a.Value.Emit())
		}
	}
	return n
}
