package cli

import (
	"encoding/json"
	"fmt"

	"github.com/vigil-run/vigil/store"
)

// A run parked on a human goes quiet: tail says when a request in the tree
// is asked and when it is decided, so a CI log shows why nothing moves.

// tailRequests prints a line for each request of the tree not told yet:
// asked while it waits, decided once it is (a request decided before it
// was ever seen is told decided only).
func (t *tailer) tailRequests(reqs []store.Request) error {
	if t.asked == nil {
		t.asked, t.decided = map[store.RequestKey]bool{}, map[store.RequestKey]bool{}
	}
	for _, q := range reqs {
		k := q.Key()
		if !t.md.Within(q.RunID, t.root) || t.decided[k] {
			continue
		}
		var line string
		switch {
		case q.Resolved:
			t.decided[k] = true
			line = fmt.Sprintf("#%s %s decided: %s", clean(q.RunID), requestKey(k), cleanCut(q.Decision, 160))
			if q.DecidedBy != "" {
				line += " (by " + clean(q.DecidedBy) + ")"
			}
		case q.Waits() && !t.asked[k]:
			t.asked[k] = true
			line = fmt.Sprintf("#%s waits on a human: %s %s", clean(q.RunID), requestKey(k), requestWhat(q))
		default:
			continue
		}
		if err := t.emit(line, tailRequestEvent{Event: tailEventOf(q), RunID: q.RunID, Step: q.Step, Request: requestKey(k),
			What: requestWhat(q), Decision: decisionOf(q), DecidedBy: str(q.DecidedBy)}); err != nil {
			return err
		}
	}
	return nil
}

func tailEventOf(q store.Request) string {
	if q.Resolved {
		return "decided"
	}
	return "asked"
}

func decisionOf(q store.Request) *string {
	if !q.Resolved {
		return nil
	}
	return str(q.Decision)
}

// requestWhat says in a few words what a request asks.
func requestWhat(q store.Request) string {
	switch q.Kind {
	case store.Approval:
		return cleanCut(q.Act+" "+q.Target, 160)
	case store.Question:
		return cleanCut(q.Question, 160)
	default:
		return fmt.Sprintf("a plan of %d steps", len(q.PlanSteps))
	}
}

// tail --json writes one JSON object a line for what the text lines say:
// each step row, each request asked and decided, and the stop.
type tailStepEvent struct {
	Event    string  `json:"event"` // step, retry (a folded row), pending (a step in flight)
	RunID    string  `json:"run_id"`
	Step     int     `json:"step"`
	Decision string  `json:"decision"`
	Result   *string `json:"result"`
	Tokens   *int64  `json:"tokens"` // null: not reported
}

type tailRequestEvent struct {
	Event     string  `json:"event"` // asked, decided
	RunID     string  `json:"run_id"`
	Step      int     `json:"step"`
	Request   string  `json:"request"`
	What      string  `json:"what"`
	Decision  *string `json:"decision"`
	DecidedBy *string `json:"decided_by"`
}

type tailStopEvent struct {
	Event string `json:"event"` // stopped
	RunID string `json:"run_id"`
	Line  string `json:"line"` // the text line tail ends with
	Exit  int    `json:"exit"`
}

// emit writes one line: the text, or with --json the event.
func (t *tailer) emit(line string, ev any) error {
	if t.json {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		line = string(b)
	}
	_, err := fmt.Fprintln(t.a.out(), line)
	return err
}
