package audit

import (
	"errors"
	"fmt"
	"os"
	"os/user"
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

// ErrOutcomeUnknown is what an error whose decision may or may not have
// been written matches (errors.Is): its line is Unknown.
var ErrOutcomeUnknown = errors.New("whether the decision was written is unknown")

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
