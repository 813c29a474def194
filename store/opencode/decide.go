package opencode

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

// Decide answers a waiting request in the opencode server, exactly once
// among vigil's deciders: the decision is first claimed in vigil's gate
// store (gate.Hook.Claim, a compare-and-set on the request's key), and only
// the claim's winner sends it. The server itself answers an id once
// (Permission.reply deletes it from its pending map; a second reply is a
// 404), so a request answered in opencode's own TUI meanwhile loses the
// claim's winner the decision too, and it is told so.
func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	var res store.DecideResult
	if s.readOnly {
		return res, store.Errorf(s.path, store.ErrReadOnly, nil, "%s not decided: the store was opened read-only", d.Key)
	}
	reply := map[store.Verdict]string{store.VerdictApprove: "once", store.VerdictDeny: "reject"}[d.Verdict]
	if d.Key.Kind != store.Approval || reply == "" {
		return res, store.Errorf(s.path, store.ErrUnsupported, nil, "%s: an opencode permission is approved or denied", d.Key)
	}
	hook, err := gate.OpenHook(gate.Path(os.Getenv))
	if err != nil {
		return res, err
	}
	defer hook.Close()
	key := claimKey(d.Key.ID)
	if held, found, err := hook.Claimed(ctx, key); err != nil {
		return res, err
	} else if found {
		return lostTo(held), nil
	}
	dirs, err := s.runningDirs(ctx, nil)
	if err != nil {
		return res, err
	}
	pend, err := s.srv.pending(ctx, append(dirs, ""))
	if err != nil {
		return res, err
	}
	var p *permission
	for i := range pend {
		if pend[i].ID == d.Key.ID {
			p = &pend[i]
		}
	}
	if p == nil {
		// Not waiting: answered in opencode, as far as vigil saw it wait.
		r, err := s.Request(ctx, d.Key)
		if err != nil {
			return res, err
		}
		return store.DecideResult{Decision: r.Decision, DecidedBy: r.DecidedBy}, nil
	}
	reason := ""
	if d.Verdict == store.VerdictDeny {
		reason = d.Text
	}
	won, held, err := hook.Claim(ctx, gate.Claim{Key: key, Verdict: string(d.Verdict), Reason: reason})
	if err != nil {
		return res, err
	}
	if !won {
		return lostTo(held), nil
	}
	switch err := s.srv.reply(ctx, *p, reply, reason); {
	case err == nil:
		if err := hook.Settle(ctx, key, gate.ClaimSent); err != nil {
			return res, err
		}
		return store.DecideResult{Won: true, Decision: string(d.Verdict), DecidedBy: held.DecidedBy}, nil
	case errors.Is(err, errAnswered):
		// Answered in opencode between the listing and the reply.
		if err := hook.Settle(ctx, key, gate.ClaimAnswered); err != nil {
			return res, err
		}
		rs, err := s.requestsFrom(ctx, []permission{*p}, false)
		if err != nil || len(rs) == 0 {
			return store.DecideResult{Decision: "answered in opencode", DecidedBy: "opencode"}, err
		}
		return s.answeredIn(ctx, rs[0]), nil
	case refused(err):
		// The server was not there to take it: the request is as it was.
		hook.Release(ctx, key)
		return res, store.Errorf(s.path, store.ErrIO, err, "%s not decided: %v", d.Key, err)
	default:
		hook.Settle(ctx, key, "unknown: "+firstLine(err.Error()))
		return res, store.Errorf(s.path, store.ErrIO, err, "%s: whether opencode took the decision is unknown: %v", d.Key, err)
	}
}

// refused reports an error that left the request untouched: the server's
// port took no connection.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func claimKey(id string) string { return Format + " " + id }

// lostTo is a decision that lost the claim to held.
func lostTo(held gate.Claim) store.DecideResult {
	switch {
	case held.Outcome == gate.ClaimAnswered:
		return store.DecideResult{Decision: "answered in opencode", DecidedBy: "opencode"}
	case strings.HasPrefix(held.Outcome, "unknown"):
		return store.DecideResult{Decision: held.Verdict + ", sent, but whether opencode took it is unknown", DecidedBy: held.DecidedBy}
	}
	return store.DecideResult{Decision: held.Verdict, DecidedBy: held.DecidedBy}
}

// answeredIn is a request answered in opencode itself, as its tool call
// shows it.
func (s *Store) answeredIn(ctx context.Context, r store.Request) store.DecideResult {
	q := s.resolve(ctx, r)
	return store.DecideResult{Decision: q.Decision, DecidedBy: q.DecidedBy}
}
