package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-run/vigil/remote"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/union"
	"github.com/vigil-run/vigil/tui"
	"github.com/vigil-run/vigil/watch"
)

// runSeveral is the explorer on several stores at once (`vigil A B
// ssh://h/C`): one runs list with a store column, one approval queue, each
// store offline on its own (store/union). Every store must open at start:
// one that does not is one line naming it.
func (a *app) runSeveral(ctx context.Context, o exploreOpts, names []string) error {
	held := &heldLines{}
	var members []union.Member
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	seen := map[string]string{}
	for _, name := range names {
		if err := a.namedTwice(seen, name); err != nil {
			return err
		}
		if remote.IsURL(name) {
			t, err := remote.ParseTarget(name)
			if err != nil {
				return &usageError{err}
			}
			opt := remote.Options{SSH: strings.Fields(a.getenv("VIGIL_SSH")), RemoteVigil: a.getenv("VIGIL_REMOTE_VIGIL"),
				ReadOnly: o.readOnly, Log: func(l string) { fmt.Fprintf(held, "vigil: %s %s\n", time.Now().Format("15:04:05"), l) }}
			a.remoteAudit(&opt, "the explorer")
			if opt.Audit != nil {
				closers = append(closers, func() { opt.Audit.Close() })
			}
			c, err := a.dial(ctx, t, opt)
			if err != nil {
				return err
			}
			closers = append(closers, func() { c.Close() })
			members = append(members, union.Member{Name: t.String(), Source: c.Source(), Offline: c.Offline,
				Wakeups: func() (watch.Wakeup, error) { return c.Wakeups() }})
			continue
		}
		path, ro := a.expandHome(name), o.readOnly
		ss := &sources{path: path, readOnly: ro}
		closers = append(closers, func() { closeWithin(closeWait, ss.close) })
		src, err := ss.open()
		if err != nil {
			return err
		}
		members = append(members, union.Member{Name: path, Source: src, Reopen: ss.open, Poll: o.poll})
	}
	set, err := union.New(members)
	if err != nil {
		return err
	}
	src := set.Source()
	if o.run != "" && !strings.Contains(o.run, "/") {
		p := set.Stores()[0].Prefix
		return usagef("--run %s: with several stores a run is named store/id, as the explorer shows it (%s/%s)", o.run, p, o.run)
	}
	if o.run != "" {
		if _, err := src.(store.RunGetter).Run(ctx, o.run); err != nil {
			return noSuchRun(src, o.run)
		}
	}
	topt := tui.Options{Source: src, Reopen: func() (store.Source, error) { return set.Source(), nil },
		Wakeups: func() (watch.Wakeup, error) { return set.Wakeups() }, Poll: o.poll, Run: o.run,
		NoColor: a.getenv("NO_COLOR") != ""}
	if err := a.tuiConfig(&topt); err != nil {
		return err
	}
	err = a.explore(ctx, a, topt)
	held.writeTo(a.errOut())
	return err
}
