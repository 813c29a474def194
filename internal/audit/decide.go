package audit

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/vigil-run/vigil/store"
)

// More outcomes.
const (
	Attempt = "attempt" // written before the store is: nothing is decided that the log does not hold
	// Unknown is a decision the link took with it: it may or may not have
	// been written (it is never sent again).
	Unknown = "unknown"
	// ReadAgain is what the store held when a decision whose outcome was
	// unknown was read again once the link was back (Held says it).
	ReadAgain = "read-again"
)

// Decide makes one decision with decide and records it: an attempt line
// before the store is written and the outcome after, each fsync'd before
// the next step, so a decision reported won is in the log. A log that
// cannot be written refuses the decision before anything is sent;
// outcome names the result (nil: Of's reading of res and err).
func (l *Log) Decide(ctx context.Context, storePath string, d store.Decision, who Who, channel string,
	decide func(context.Context, store.Decision) (store.DecideResult, error), outcome func(error) string) (store.DecideResult, error) {
	res, _, err := l.DecideAt(ctx, time.Now, storePath, d, who, channel, decide, outcome)
	return res, err
}

// DecideAt is Decide on the clock now, and returns the outcome's record
// too (vigil serve names the winner from it).
func (l *Log) DecideAt(ctx context.Context, now func() time.Time, storePath string, d store.Decision, who Who, channel string,
	decide func(context.Context, store.Decision) (store.DecideResult, error), outcome func(error) string) (store.DecideResult, Record, error) {
	intent := Of(storePath, d, "", who, channel, store.DecideResult{}, nil, now())
	intent.Outcome = Attempt
	if err := l.Append(intent); err != nil {
		return store.DecideResult{}, Record{}, fmt.Errorf("not decided: %w", err)
	}
	res, err := decide(ctx, d)
	rec := Of(storePath, d, "", who, channel, res, err, now())
	if outcome != nil {
		if o := outcome(err); o != "" {
			rec.Outcome, rec.Held = o, ""
		}
	}
	aerr := l.Append(rec)
	if aerr != nil && err == nil && res.Won {
		return res, rec, fmt.Errorf("decided in the store, but the audit log was not written: %w", aerr)
	}
	return res, rec, err
}

// LocalWho is the person at this terminal: the login name and the
// machine ("ann@laptop"), with no key (the system ssh holds it).
func LocalWho(getenv func(string) string) Who {
	name := getenv("USER")
	if name == "" {
		name = getenv("LOGNAME")
	}
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		name = "unknown user"
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += "@" + h
	}
	return Who{Name: name}
}

// OpenIn opens the log in the state directory getenv names.
func OpenIn(getenv func(string) string) (*Log, error) {
	dir, err := StateDir(getenv)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return Open(dir + string(os.PathSeparator) + FileName)
}
