package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-run/vigil/remote"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/union"
	"github.com/vigil-run/vigil/watch"
)

// storesHelp is --store on the commands that read several stores.
const storesHelp = storeHelp + "; repeat it for several stores, and an ssh://[user@]host[:port]/path names a store on another machine (ids are then store/id)"

// openNamed opens the stores a command names with --store: none or one
// local store as before; an ssh:// URL through the far side's vigil agent;
// two or more as one set (store/union), its ids "<prefix>/<id>". via names
// the command in the audit log of decisions sent to ssh:// stores. The
// returned close closes everything opened.
func (a *app) openNamed(ctx context.Context, names []string, readOnly bool, via string) (store.Source, func(), error) {
	o, err := a.openStores(ctx, names, readOnly, via)
	if err != nil {
		return nil, nil, err
	}
	return o.src, o.close, nil
}

// opened is what openStores opened: the source, how to close it, and its
// wakeup when it is not a local file's watcher (nil: watch Source.Watch).
type opened struct {
	src   store.Source
	close func()
	wake  func() (watch.Wakeup, error)
}

func (a *app) openStores(ctx context.Context, names []string, readOnly bool, via string) (opened, error) {
	if named, err := a.named(names); err != nil {
		return opened{}, err
	} else if !named {
		found, err := a.discover()
		if err != nil {
			return opened{}, err
		}
		if len(found) > 1 {
			fmt.Fprintf(a.errOut(), "vigil: no store named; reading the %d found: %s\n", len(found), strings.Join(found, ", "))
			names = found
		}
	}
	if len(names) <= 1 && (len(names) == 0 || !remote.IsURL(names[0])) {
		name := ""
		if len(names) == 1 {
			name = names[0]
		}
		path, err := a.resolveStore(name)
		if err != nil {
			return opened{}, err
		}
		src, err := openSource(path, readOnly)
		if err != nil {
			return opened{}, err
		}
		return opened{src: src, close: func() { closeWithin(closeWait, func() { src.Close() }) }}, nil
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	var members []union.Member
	seen := map[string]string{}
	for _, name := range names {
		if err := a.namedTwice(seen, name); err != nil {
			closeAll()
			return opened{}, err
		}
		if remote.IsURL(name) {
			c, closeC, err := a.dialNamed(ctx, name, readOnly, via)
			if err != nil {
				closeAll()
				return opened{}, err
			}
			closers = append(closers, closeC)
			members = append(members, union.Member{Name: c.Target().String(), Source: c.Source(), Offline: c.Offline,
				Wakeups: func() (watch.Wakeup, error) { return c.Wakeups() }})
			if len(names) == 1 {
				return opened{src: c.Source(), close: closeAll, wake: c.Wakeups}, nil
			}
			continue
		}
		path := a.expandHome(name)
		src, err := openSource(path, readOnly)
		if err != nil {
			closeAll()
			return opened{}, err
		}
		closers = append(closers, func() { closeWithin(closeWait, func() { src.Close() }) })
		members = append(members, union.Member{Name: path, Source: src})
	}
	set, err := union.New(members)
	if err != nil {
		closeAll()
		return opened{}, err
	}
	return opened{src: set.Source(), close: closeAll, wake: func() (watch.Wakeup, error) { return set.Wakeups() }}, nil
}

// dialNamed connects to an ssh:// store for a one-shot command: the link's
// events go to standard error as they happen, decisions to the audit log.
func (a *app) dialNamed(ctx context.Context, url string, readOnly bool, via string) (*remote.Client, func(), error) {
	t, err := remote.ParseTarget(url)
	if err != nil {
		return nil, nil, &usageError{err}
	}
	opt := remote.Options{SSH: strings.Fields(a.getenv("VIGIL_SSH")), RemoteVigil: a.getenv("VIGIL_REMOTE_VIGIL"), ReadOnly: readOnly,
		Log: func(l string) { fmt.Fprintf(a.errOut(), "vigil: %s %s\n", time.Now().Format("15:04:05"), l) }}
	a.remoteAudit(&opt, via)
	c, err := a.dial(ctx, t, opt)
	if err != nil {
		if opt.Audit != nil {
			opt.Audit.Close()
		}
		return nil, nil, err
	}
	return c, func() {
		c.Close()
		if opt.Audit != nil {
			opt.Audit.Close()
		}
	}, nil
}

// withNamed is withSource over what --store names (openNamed).
func (a *app) withNamed(ctx context.Context, names []string, warnFirst bool, via string, fn func(*session) error) error {
	o, err := a.openStores(ctx, names, false, via)
	if err != nil {
		return err
	}
	defer o.close()
	s := &session{a: a, src: o.src, path: o.src.Path(), wake: o.wake}
	if warnFirst {
		s.warn(nil)
	}
	err = fn(s)
	s.warn(err)
	return err
}
