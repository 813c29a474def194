package cli

import (
	"fmt"
	"io"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/store"
)

// show's decision history: every decided request of the run's tree, with
// what was decided, when (where the format records it) and by whom.

// jsonDecision is a decided request: the request as `requests` gives it,
// with who decided it, when, and the reason given.
type jsonDecision struct {
	jsonRequest
	// Channel is who decided: decided_by, else (an io-harness approval) the
	// source of the decision event its run recorded; null when unrecorded.
	Channel   *string `json:"channel"`
	DecidedAt *string `json:"decided_at"` // null: the format records no time (io-harness)
	Reason    *string `json:"reason"`     // a deny's reason, where the format keeps one (Starweaver)
	Words     string  `json:"words"`      // what was decided, as vigil says it
}

func (rd *reading) decisionJSON(d store.DecisionRecord) jsonDecision {
	return jsonDecision{jsonRequest: rd.requestJSON(d.Request), Channel: str(d.Channel),
		DecidedAt: timePtr(d.DecidedAt), Reason: str(d.Reason), Words: store.DecisionWords(d.Request)}
}

// decisionLine is one decided request's summary: what, by whom, when.
func (a *app) decisionLine(d store.DecisionRecord) string {
	by := "by: not recorded"
	if d.Channel != "" {
		by = "by " + clean(d.Channel)
	}
	at := "at: not recorded"
	if !d.DecidedAt.IsZero() {
		at = "at " + a.fmtTime(d.DecidedAt)
	}
	return clean(store.DecisionWords(d.Request)) + " · " + by + " · " + at
}

func (a *app) decisionsText(w io.Writer, sh *shown) {
	fmt.Fprintf(w, "\ndecided requests (%d)\n", len(sh.decided))
	for _, d := range sh.decided {
		fmt.Fprintf(w, "  %s  run %s, step %d  %s\n", clean(requestKey(d.Key())), clean(d.RunID), d.Step, a.decisionLine(d))
		a.requestBody(w, d.Request)
	}
}

func (a *app) decisionsMarkdown(w io.Writer, sh *shown) {
	if len(sh.requests) == 0 {
		fmt.Fprintln(w) // after the open requests' "None."
	}
	fmt.Fprintf(w, "## Decided requests\n\n")
	if len(sh.decided) == 0 {
		fmt.Fprintf(w, "None.\n\n")
		return
	}
	var rows [][]string
	for _, d := range sh.decided {
		what := ""
		switch d.Kind {
		case store.Approval:
			what = d.Act + " " + d.Target
		case store.Question:
			what = d.Question
		case store.Plan:
			what = fmt.Sprintf("%d steps", len(d.PlanSteps))
		}
		by, at := "*not recorded*", "*not recorded*"
		if d.Channel != "" {
			by = mdCell(d.Channel)
		}
		if !d.DecidedAt.IsZero() {
			at = a.fmtTime(d.DecidedAt)
		}
		rows = append(rows, []string{mdCell(requestKey(d.Key())), mdCell(d.RunID), fmt.Sprint(d.Step), mdCell(what),
			mdCell(store.DecisionWords(d.Request)), by, at})
	}
	mdTable(w, []string{"Request", "Run", "Step", "Asked", "Decided", "By", "At"}, rows)
}

// nameDeciders names who decided what vigil decided (the explorer, vigil
// approve …, vigil serve run by this user), from this user's audit log:
// the store often records nobody, or only "attached". A log that cannot
// be read leaves the store's record as it is.
func (a *app) nameDeciders(src store.Source, recs []store.DecisionRecord) {
	if p, err := audit.LocalPath(a.getenv); err == nil {
		_ = audit.NameDeciders(p, src.Path(), recs)
	}
}
