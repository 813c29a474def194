package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store/gate"
	"github.com/vigil-run/vigil/watch"
)

// hookVerdict is what a hook tells its agent: go ahead, do not, or ask the
// person at the agent's own prompt.
type hookVerdict string

const (
	answerAllow hookVerdict = "allow"
	answerDeny  hookVerdict = "deny"
	answerAsk   hookVerdict = "ask"
)

type hookAnswer struct {
	verdict hookVerdict
	reason  string
	// always is what the person allowed from now on with the approval
	// (the request's own suggestions, as the agent offered them).
	always json.RawMessage
}

// hookDialect is one agent CLI's hook protocol: what its request says and
// how an answer is written. Another CLI is another dialect.
type hookDialect struct {
	name   string // as `vigil gate install NAME` takes it
	agent  string // the agent name its requests carry in the gate store
	parse  func(body []byte) (gate.Request, error)
	answer func(event string, a hookAnswer) []byte // nil: write nothing
	// failCode is the exit status that makes the CLI block the call when
	// the gate cannot answer at all.
	failCode int
}

var hookDialects = map[string]hookDialect{"claude": claudeHook, "gemini": geminiHook, "codex": codexHook}

// defaultGateTimeout is how long a hook waits for a person by default.
const defaultGateTimeout = 10 * time.Minute

// maxHookInput caps what is read of a hook's request (a file write's
// content is in it).
const maxHookInput = 64 << 20

func (a *app) gateCmd() *cobra.Command {
	var timeout time.Duration
	var agent string
	c := &cobra.Command{
		Use:   "gate",
		Short: "The hook an agent CLI runs: wait for an approve or deny in vigil",
		Long: `gate is the command an agent CLI's permission hook runs (install it with
'vigil gate install claude', 'gemini', …). It reads the hook's request on standard input,
records it in vigil's gate store, where the explorer and 'vigil approve/deny'
see it as an approval, waits for a decision and answers the agent in its own
format. It never approves on its own: with no decision within --timeout (or
the config's gate.timeout) the question goes back to the agent's own prompt
where its protocol allows, and any failure denies. See docs/gate.md.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, ok := hookDialects[agent]
			if !ok {
				return usagef("--agent %q: vigil gate speaks %s", agent, dialectNames())
			}
			if !cmd.Flags().Changed("timeout") {
				c, err := a.config()
				if err != nil {
					return err
				}
				if c.GateTimeout > 0 {
					timeout = c.GateTimeout
				}
			}
			if timeout <= 0 {
				return usagef("--timeout %s: give a positive duration", timeout)
			}
			return a.gate(cmd.Context(), d, timeout)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", defaultGateTimeout, "how long to wait for a decision before handing the question back to the agent")
	c.Flags().StringVar(&agent, "agent", "claude", "the agent CLI whose hook protocol to speak")
	c.AddCommand(a.gateInstallCmd(true), a.gateInstallCmd(false))
	return c
}

// gate runs one hook request to its answer.
func (a *app) gate(ctx context.Context, d hookDialect, timeout time.Duration) error {
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return usagef("vigil gate is run by an agent's hook with its request on standard input; install it with: vigil gate install %s [--scope user|project]", strings.ReplaceAll(dialectNames(), ", ", "|"))
	}
	body, err := io.ReadAll(io.LimitReader(a.stdin, maxHookInput))
	if err != nil {
		return a.gateFail(d, fmt.Errorf("reading the hook's request: %w", err))
	}
	req, err := d.parse(body)
	if err != nil {
		return a.gateFail(d, err)
	}
	if req.AgentPID == 0 { // a dialect that knows its agent better has named it
		req.AgentPID, req.AgentStart = gate.AgentProcess()
	}
	ans, err := a.gateWait(ctx, req, timeout)
	if err != nil {
		ans = hookAnswer{verdict: answerDeny, reason: "vigil gate: " + sanitize.Line(err.Error())}
		if req.Event == "PermissionRequest" {
			ans.verdict = answerAsk // hand it back to the prompt rather than refuse outright
		}
		fmt.Fprintln(a.errOut(), "vigil gate: not approved: "+sanitize.Line(err.Error()))
	}
	if out := d.answer(req.Event, ans); out != nil {
		if _, err := a.stdout.Write(out); err != nil {
			return &exitStatus{d.failCode}
		}
	}
	return nil
}

// gateFail says why the gate could not even record the request and exits
// with the status that makes the agent block the call.
func (a *app) gateFail(d hookDialect, err error) error {
	fmt.Fprintln(a.errOut(), "vigil gate: not approved: "+sanitize.Line(err.Error()))
	return &exitStatus{d.failCode}
}

// gateWait records req and waits for its decision, its timeout or this
// process being stopped; only an approval in the store allows.
func (a *app) gateWait(ctx context.Context, req gate.Request, timeout time.Duration) (hookAnswer, error) {
	h, err := gate.OpenHook(gate.Path(a.getenv))
	if err != nil {
		return hookAnswer{}, fmt.Errorf("the gate store: %w", err)
	}
	defer h.Close()
	id, err := h.Ask(ctx, req)
	if err != nil {
		return hookAnswer{}, fmt.Errorf("recording the request: %w", err)
	}
	fmt.Fprintf(a.errOut(), "vigil gate: approval %d waits in %s (vigil approve %d / vigil deny %d)\n", id, h.Path(), id, id)
	// Watch first, then read: a decision landing in between is seen by
	// the read, one after it by the watch.
	w, err := watch.New(watch.Options{Path: h.Path(), Version: h.Version})
	if err != nil {
		return hookAnswer{}, fmt.Errorf("watching the gate store: %w", err)
	}
	defer w.Close()
	// The agent killed outright leaves this hook running: the kernel says
	// when it exits (a nil channel where it cannot: readers still see the
	// agent's pid gone).
	var agentGone <-chan struct{}
	if req.AgentPID > 0 {
		agentGone, _ = gate.Exited(req.AgentPID, req.AgentStart)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	end := func(state, reason string, v hookVerdict) (hookAnswer, error) {
		// A fresh context: ctx may be the one that was cancelled.
		ok, err := h.End(context.Background(), id, state, reason)
		if err != nil {
			return hookAnswer{}, fmt.Errorf("marking approval %d %s: %w", id, state, err)
		}
		if !ok { // a decision came first: it stands
			return a.gateDecided(h, id)
		}
		fmt.Fprintf(a.errOut(), "vigil gate: approval %d %s: %s\n", id, state, reason)
		return hookAnswer{verdict: v, reason: "vigil: " + reason}, nil
	}
	for {
		ans, err := a.gateDecided(h, id)
		if err != nil || ans.verdict != "" {
			return ans, err
		}
		select {
		case s := <-w.C():
			if s.Kind == watch.Gone {
				return hookAnswer{}, fmt.Errorf("the gate store went away: %s", s.Reason)
			}
			w.Ack(true)
		case <-deadline.C:
			return end(gate.StateExpired, fmt.Sprintf("no decision within %s", timeout), answerAsk)
		case <-agentGone:
			return end(gate.StateWithdrawn, fmt.Sprintf("the agent (process %d) exited while it waited", req.AgentPID), answerDeny)
		case <-ctx.Done():
			return end(gate.StateWithdrawn, "the hook was stopped (the agent was interrupted)", answerDeny)
		}
	}
}

// gateDecided reads the request: its answer once decided, no verdict
// while it waits.
func (a *app) gateDecided(h *gate.Hook, id int64) (hookAnswer, error) {
	r, err := h.Get(context.Background(), id)
	if err != nil {
		return hookAnswer{}, fmt.Errorf("reading approval %d: %w", id, err)
	}
	by := sanitize.Line(strings.TrimSpace(r.DecidedBy))
	switch r.State {
	case gate.StateWaiting:
		return hookAnswer{}, nil
	case gate.StateApproved:
		a := hookAnswer{verdict: answerAllow, reason: "approved in vigil by " + by}
		if r.Always && json.Valid([]byte(r.Suggestions)) {
			a.always = json.RawMessage(r.Suggestions)
		}
		return a, nil
	case gate.StateDenied:
		reason := r.Reason
		if reason == "" {
			reason = "denied in vigil by " + by
		}
		return hookAnswer{verdict: answerDeny, reason: reason}, nil
	}
	return hookAnswer{}, errors.New("approval " + fmt.Sprint(id) + " is " + r.State + ": " + r.Reason)
}

// dialectNames lists the CLIs vigil gate speaks, sorted.
func dialectNames() string {
	names := make([]string, 0, len(hookDialects))
	for n := range hookDialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
