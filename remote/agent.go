package remote

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/livetail"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// AgentOptions are what `vigil agent --stdio` runs with.
type AgentOptions struct {
	Path     string
	ReadOnly bool
	Vigil    string // this vigil's version
	Open     func(path string, readOnly bool) (store.Source, error)
	Poll     time.Duration
	// Audit is the far machine's decision log (nil: none): each decision
	// made through the agent is recorded there as on the client's, who
	// the account ssh logged in as (Who), the channel Channel and the
	// client's claim of who it is.
	Audit   *audit.Log
	Who     audit.Who
	Channel string
	// DecideLock is the file decisions and request reads are ordered by
	// (decide_lock.go; "": none).
	DecideLock string
}

// Agent serves the store at opt.Path on in/out until in ends or ctx is
// done. A store that cannot be opened is said on the first line.
func Agent(ctx context.Context, in io.Reader, out io.Writer, opt AgentOptions) error {
	w := &lineWriter{enc: json.NewEncoder(out)}
	hub, err := livetail.New(func() (store.Source, error) { return opt.Open(opt.Path, opt.ReadOnly) }, livetail.Options{Poll: opt.Poll})
	if err != nil {
		w.write(helloLine{Error: err.Error()})
		return err
	}
	defer hub.Close()
	src := hub.Source()
	inst := make([]byte, 8)
	rand.Read(inst)
	a := &agent{hub: hub, instance: hex.EncodeToString(inst), w: w, opt: opt}
	ro, why := src.ReadOnly()
	caps := src.Capabilities()
	w.write(helloLine{Hello: &Hello{Proto: Proto, MinProto: MinProto, Vigil: opt.Vigil, Instance: a.instance, Path: src.Path(), Format: src.Format(),
		ReadOnly: ro, ReadOnlyWhy: why, RecordsLeases: src.RecordsLeases(), Activity: caps.Has(store.CapActivity), RecentRuns: true,
		Capabilities: append([]string{}, caps.Names()...), Reasons: reasonsOf(src)}})

	sub := hub.Subscribe()
	defer sub.Close()
	go func() {
		for sig := range sub.C() {
			switch sig.Kind {
			case watch.Gone:
				w.write(reply{Notice: "gone", Reason: sig.Reason})
			default:
				w.write(reply{Notice: "changed"})
			}
		}
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			w.write(reply{Error: &wireError{Message: "vigil agent: a line that is not a request: " + err.Error()}})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := a.call(ctx, req)
			rep := reply{ID: req.ID, Error: toWire(err)}
			if err == nil {
				b, merr := json.Marshal(res)
				if merr != nil {
					rep.Error = toWire(merr)
				} else {
					rep.Result = b
				}
			}
			w.write(rep)
		}()
	}
	return sc.Err()
}

type agent struct {
	opt      AgentOptions
	hub      *livetail.Hub
	instance string
	w        *lineWriter
}

type lineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (l *lineWriter) write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enc.Encode(v)
}

func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 {
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

func (a *agent) call(ctx context.Context, req request) (any, error) {
	src := a.hub.Source()
	timeout := 30 * time.Second
	if streamed[req.Method] {
		timeout = streamTimeout // as long as the link takes to carry the field
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch req.Method {
	case "Head":
		return a.head(ctx, src)
	case "Changes":
		c, err := decode[wireCursor](req.Params)
		if err != nil {
			return nil, err
		}
		if len(c.Token) > 0 {
			return a.tokenChanges(ctx, src, c.Token)
		}
		if c.Instance != a.instance {
			e, s := a.hub.Mark()
			return changesResult{Changes: &store.Changes{Reset: true}, Next: wireCursor{Instance: a.instance, Epoch: e, Seq: s}}, nil
		}
		ch, e, s, err := a.hub.Since(c.Epoch, c.Seq)
		if err != nil {
			return nil, err
		}
		return changesResult{Changes: ch, Next: wireCursor{Instance: a.instance, Epoch: e, Seq: s}}, nil
	case "Runs":
		return src.Runs(ctx)
	case "RecentRuns":
		// The first screen's page: a store that can give it without
		// waiting (a Leviath journal still being folded) does.
		p, err := decode[recentParams](req.Params)
		if err != nil {
			return nil, err
		}
		runs, all, err := src.RecentRuns(ctx, p.Limit)
		return recentResult{Runs: runs, All: all}, err
	case "RunStats":
		p, err := decode[idsParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.RunStats(ctx, p.IDs)
	case "Steps":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.Steps(ctx, p.Run)
	case "StepDetail":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.StepDetail(ctx, p.Run, p.Row)
	case "ContextSamples":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.ContextSamples(ctx, p.Run)
	case "ProviderCalls":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.ProviderCalls(ctx, p.Run)
	case "Requests":
		p, err := decode[requestsParams](req.Params)
		if err != nil {
			return nil, err
		}
		// After any decision another agent of this store has in flight.
		defer lockDecisions(a.opt.DecideLock, false)()
		return src.Requests(ctx, p.Unresolved, p.Runs...)
	case "AgentEvents":
		p, err := decode[idsParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.AgentEvents(ctx, p.IDs...)
	case "Classify":
		p, err := decode[classifyParams](req.Params)
		if err != nil {
			return nil, err
		}
		d, why := src.Classify(p.Req, p.Run, p.Lease, time.Unix(0, p.Now))
		return classifyResult{Delivery: d, Why: why}, nil
	case "Decide":
		p, err := decode[decideParams](req.Params)
		if err != nil {
			return nil, err
		}
		ch := a.opt.Channel
		if p.By != "" {
			ch += ", for " + sanitize.Line(p.By)
		}
		// Without a log of its own, the agent decides on: the caller's
		// audit line, written before the decision was sent, records it.
		mk := decision.Maker{Who: a.opt.Who, Via: ch, Log: a.opt.Audit, Unlogged: true}
		defer lockDecisions(a.opt.DecideLock, true)()
		res, err := mk.Make(ctx, src, decision.Ask{Decision: p.Decision})
		if err == nil {
			a.hub.Poke()
		}
		return res, err
	case "RunFacts":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return src.RunFacts(ctx, p.Run)
	case "CanonicalTrace":
		p, err := decode[runParams](req.Params)
		if err != nil {
			return nil, err
		}
		return store.CanonicalTrace(ctx, src, p.Run)
	case "LastWrite":
		return src.LastWrite(ctx)
	case "Activity":
		q, err := decode[store.ActivityQuery](req.Params)
		if err != nil {
			return nil, err
		}
		return src.Activity(ctx, q)
	}
	if res, ok, err := a.contractCall(ctx, src, req); ok {
		return res, err
	}
	return nil, fmt.Errorf("vigil agent: no method %q (protocol %d)", req.Method, Proto)
}
