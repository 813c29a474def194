package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	decisions "github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/store"
)

// parseRequest reads a request key: a bare id (of kind def) or a typed key
// approval:12, question:4, plan:3.
func parseRequest(s string, def store.RequestKind) (store.RequestKey, error) {
	kind, id, typed := strings.Cut(strings.TrimSpace(s), ":")
	if !typed {
		kind, id = def.String(), kind
	}
	if id == "" {
		return store.RequestKey{}, usagef("%q is not a request: give an id (12) or a typed key (approval:12, plan:3, question:4)", s)
	}
	switch strings.ToLower(kind) {
	case "approval":
		return store.RequestKey{Kind: store.Approval, ID: id}, nil
	case "question":
		return store.RequestKey{Kind: store.Question, ID: id}, nil
	case "plan":
		return store.RequestKey{Kind: store.Plan, ID: id}, nil
	}
	return store.RequestKey{}, usagef("%q is not a request kind: use approval, plan or question", kind)
}

// The deciding commands, by name. A command is not a verdict: deny cancels
// a plan, and answer decides a question with words.
const (
	verbApprove = "approve"
	verbDeny    = "deny"
	verbAnswer  = "answer"
	verbRevise  = "revise"
)

// decision turns a command and its arguments into the decision to write.
func decision(verb, req, text string) (store.Decision, error) {
	def := store.Approval
	switch verb {
	case verbAnswer:
		def = store.Question
	case verbRevise:
		def = store.Plan
	}
	key, err := parseRequest(req, def)
	if err != nil {
		return store.Decision{}, err
	}
	d := store.Decision{Key: key}
	switch {
	case verb == verbApprove && key.Kind != store.Question:
		d.Verdict = store.VerdictApprove
	case verb == verbDeny && key.Kind == store.Approval:
		d.Verdict = store.VerdictDeny
	case verb == verbDeny && key.Kind == store.Plan:
		d.Verdict = store.VerdictCancel
	case verb == verbAnswer && key.Kind == store.Question:
		d.Text = text
	case verb == verbRevise && key.Kind == store.Plan:
		d.Verdict, d.Text = store.VerdictRevise, text
	case key.Kind == store.Question:
		return d, usagef("%s is a question: answer it with 'vigil answer %s TEXT'", requestKey(key), key.ID)
	case verb == verbAnswer:
		return d, usagef("%s is not a question: use approve or deny", requestKey(key))
	default: // revise on an approval
		return d, usagef("%s is not a plan: only a plan is revised", requestKey(key))
	}
	return d, nil
}

func (a *app) decide(ctx context.Context, o decideOpts, verb, req, text string) error {
	d, err := decision(verb, req, text)
	if err != nil {
		return err
	}
	if verb == verbAnswer || verb == verbRevise {
		if d.Text, err = a.readText(d.Text); err != nil {
			return err
		}
		if strings.TrimSpace(d.Text) == "" {
			return usagef("the %s is empty", map[string]string{verbAnswer: "answer", verbRevise: "correction"}[verb])
		}
		if verb == verbRevise {
			d.Text = strings.TrimSpace(d.Text)
		}
	}
	// Several stores (or an ssh:// one): the request's store/id prefix
	// routes the decision to its own store's compare-and-set.
	src, closeAll, err := a.openNamed(ctx, o.stores, o.readOnly, "vigil "+verb)
	if err != nil {
		return err
	}
	defer closeAll()
	key := requestKey(d.Key)
	if ro, why := src.ReadOnly(); ro {
		return &decisionError{fmt.Sprintf("%s not decided: the store is read-only (%s)", key, why)}
	}
	q, err := src.Request(ctx, d.Key)
	if err != nil {
		return err
	}
	if verb == verbAnswer && !o.raw {
		d.Text = store.ChoiceAnswer(d.Text, q.Choices) // the explorer's rule
	}
	if r := strings.TrimSpace(o.reason); r != "" {
		if !src.CarriesReason(d.Key.Kind, d.Verdict) {
			return &decisionError{fmt.Sprintf("%s not decided: %s keeps no reason with a %s, so it would not reach the agent (leave out --reason)",
				key, src.Format(), d.Verdict)}
		}
		d.Text = r
	}
	if o.always {
		if q.AlwaysAllow == "" {
			return &decisionError{fmt.Sprintf("%s not decided: its agent offers no always-allow (approve it without --always)", key)}
		}
		d.Always = true
	}
	// Recorded in this user's audit log; the store's compare-and-set
	// judges whether the run would read it (nothing here holds its lease).
	res, err := decisions.Local(a.getenv, "vigil "+verb).Make(ctx, src, decisions.Ask{Decision: d, Request: &q})
	var refused *store.RefusedError
	switch {
	case errors.As(err, &refused):
		return &decisionError{fmt.Sprintf("%s not decided: %s", key, refused.Reason)}
	case errors.Is(err, store.ErrReadOnly):
		return &decisionError{fmt.Sprintf("%s not decided: %s", key, err)}
	case err != nil:
		return err
	case !res.Won:
		won := clean(res.Decision)
		if d.Key.Kind == store.Question {
			won = fmt.Sprintf("%q", won)
		}
		if res.DecidedBy != "" {
			won += " (by " + clean(res.DecidedBy) + ")"
		}
		return &decisionError{fmt.Sprintf("%s was already decided: %s", key, won)}
	}
	fmt.Fprintln(a.out(), decidedLine(d, q))
	return nil
}

// readText reads the text from standard input when it is "-".
func (a *app) readText(text string) (string, error) {
	if text != "-" {
		return text, nil
	}
	b, err := io.ReadAll(a.stdin)
	if err != nil {
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// decidedLine says in one line what was decided.
func decidedLine(d store.Decision, q store.Request) string {
	where := fmt.Sprintf("run %s, step %d", clean(q.RunID), q.Step)
	key := requestKey(d.Key)
	switch d.Key.Kind {
	case store.Approval:
		verb := map[store.Verdict]string{store.VerdictApprove: "approved", store.VerdictDeny: "denied"}[d.Verdict]
		line := fmt.Sprintf("%s %s: %s %s (%s)", verb, key, clean(q.Act), cleanCut(q.Target, 80), where)
		if d.Always {
			line += "; from now on: " + cleanCut(q.AlwaysAllow, 160)
		}
		return line
	case store.Question:
		return fmt.Sprintf("answered %s (%s): %s", key, where, cleanCut(d.Text, 80))
	}
	switch d.Verdict {
	case store.VerdictApprove:
		return fmt.Sprintf("approved %s: %d steps (%s)", key, len(q.PlanSteps), where)
	case store.VerdictCancel:
		return fmt.Sprintf("cancelled %s (%s)", key, where)
	}
	return fmt.Sprintf("sent %s back for revision (%s): %s", key, where, cleanCut(d.Text, 80))
}
