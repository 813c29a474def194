package store

import (
	"strings"
	"time"
)

// StepRow is one timeline row as a source stores it: a step, or a row its
// format records under a step's number before (or instead of) the step —
// Kind says which, as the adapter read it from the format's own records.
type StepRow struct {
	RowID      int64
	RunID      string
	Number     int
	Kind       StepKind
	Decision   string
	ToolCall   string
	ResultHead string
	Tokens     int64
	// TokensUnknown: the store recorded no count for the step (Tokens is
	// 0 then, not a count).
	TokensUnknown bool
	// Pending: the step is not committed yet (a turn in flight). The row is
	// its placeholder, shown as it stands; the step's own row, later with a
	// larger row id, replaces it. Counts skip it.
	Pending bool
}

// IsAux reports whether the row folds under its step instead of being one.
func (r StepRow) IsAux() bool { return r.Kind.Folds() }

// AppendStepRows folds rows (in row-id order) onto a timeline: folding rows
// go under their step, and a step's own row replaces a pending placeholder
// made of them or of a pending row. It only touches the tail, so appending new rows costs
// O(new rows).
func AppendStepRows(steps []Step, rows []StepRow) []Step {
	for _, r := range rows {
		last := len(steps) - 1
		same := last >= 0 && steps[last].RunID == r.RunID && steps[last].Number == r.Number
		folded := Retry{RowID: r.RowID, Kind: r.Kind, Decision: r.Decision}
		switch {
		case r.IsAux() && same && steps[last].Pending:
			s := &steps[last]
			s.Retries = append(s.Retries, folded)
			s.Kind, s.Decision = r.Kind, r.Decision
		case r.IsAux():
			steps = append(steps, Step{RowID: r.RowID, RunID: r.RunID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
				Pending: true, Retries: []Retry{folded}})
		case r.Pending && same && steps[last].Pending:
			s := &steps[last]
			s.RowID, s.Kind, s.Decision, s.ToolCall, s.ResultHead, s.Tokens, s.TokensUnknown = r.RowID, r.Kind, r.Decision, r.ToolCall, r.ResultHead, r.Tokens, r.TokensUnknown
		case r.Pending:
			steps = append(steps, Step{RowID: r.RowID, RunID: r.RunID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
				ToolCall: r.ToolCall, ResultHead: r.ResultHead, Tokens: r.Tokens, TokensUnknown: r.TokensUnknown, Pending: true})
		case same && steps[last].Pending:
			s := &steps[last]
			s.RowID, s.Kind, s.Decision, s.ToolCall, s.ResultHead, s.Tokens, s.TokensUnknown, s.Pending = r.RowID, r.Kind, r.Decision, r.ToolCall, r.ResultHead, r.Tokens, r.TokensUnknown, false
		default:
			steps = append(steps, Step{RowID: r.RowID, RunID: r.RunID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
				ToolCall: r.ToolCall, ResultHead: r.ResultHead, Tokens: r.Tokens, TokensUnknown: r.TokensUnknown})
		}
	}
	return steps
}

// StampSteps sets each step's time from provider calls of its run: the
// last call's time and the sum of all its attempts' latencies.
func StampSteps(steps []Step, calls []ProviderCall) {
	type agg struct {
		at  time.Time
		lat time.Duration
	}
	by := map[int]agg{}
	for _, c := range calls {
		a := by[c.Step]
		if c.At.After(a.at) {
			a.at = c.At
		}
		a.lat += time.Duration(c.LatencyMS) * time.Millisecond
		by[c.Step] = a
	}
	for i := range steps {
		if a, ok := by[steps[i].Number]; ok {
			steps[i].At, steps[i].Latency = a.at, a.lat
		}
	}
}

// HeadLine is a result's head as a timeline row shows it (ResultHead): its
// first line that is not blank, trimmed, cut to at most n bytes.
func HeadLine(s string, n int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return CutBytes(l, n)
		}
	}
	return ""
}

// CutBytes is s cut to at most n bytes on a character's boundary, with an
// ellipsis where it was cut.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
