// Package audit is vigil's decision log: who decided what, when and
// through which channel, one JSON object a line, appended and fsync'd
// before the decision is reported won. It lives in the user's state
// directory ($XDG_STATE_HOME/vigil/audit.jsonl, else
// ~/.local/state/vigil/audit.jsonl) and is never rewritten: the store's
// own decided_by / answered_by columns keep what the format expects, and
// this log says which person it was.
package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
)

// FileName is the log's name in the state directory.
const FileName = "audit.jsonl"

// StateDir is vigil's state directory: $XDG_STATE_HOME/vigil, else
// ~/.local/state/vigil.
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vigil"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find a state directory: neither $XDG_STATE_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".local", "state", "vigil"), nil
}

// Who is the person behind a decision.
type Who struct {
	Name        string `json:"name"`        // the key's comment
	Fingerprint string `json:"fingerprint"` // SHA256:… of the public key
}

// Outcomes.
const (
	Won     = "won"     // the decision is the one the store holds
	Lost    = "lost"    // someone decided first
	Refused = "refused" // the store or the run could not take it
	Failed  = "error"   // the write failed (store error)
)

// Record is one line of the log.
type Record struct {
	Time  time.Time `json:"time"`
	Store string    `json:"store"`
	// StoreID is the identity of the store at Store when the line was
	// written (StoreID): a decision is shown as made in that store only.
	StoreID string `json:"store_id,omitempty"`
	Request string `json:"request"` // approval:7, question:3, plan:2
	Run     string `json:"run,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	Text    string `json:"text,omitempty"`
	Always  bool   `json:"always,omitempty"` // approved with the request's always-allow
	Who     Who    `json:"who"`
	Channel string `json:"channel"` // "ssh 10.0.0.5:51234 (vigil serve)", …
	Outcome string `json:"outcome"`
	// Held is what the store holds when the decision was lost, or why it
	// was refused.
	Held string `json:"held,omitempty"`
}

// Log appends records to one file.
type Log struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// Open opens (creating it, mode 0600, its directory 0700) the log at path.
func Open(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Log{path: path, f: f}, nil
}

// Path is where the log is.
func (l *Log) Path() string { return l.path }

// Append writes r as one line and syncs it to disk before returning.
func (l *Log) Append(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// Winners reads the log at path and returns, for the store at storePath
// whose identity is storeID (StoreID), who made each decision that won, by
// request key (the newest line wins). A line of another store once at
// that path, or one written without an identity, names nobody here. A
// missing log is empty; a torn last line is skipped.
func Winners(path, storePath, storeID string) (map[string]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]Record{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if r.Outcome == Won && r.Store == storePath && storeID != "" && r.StoreID == storeID {
			out[r.Request] = r
		}
	}
	return out, sc.Err()
}

// Describe is how a record names its decider in the explorer:
// "alice (SHA256:…) via ssh 10.0.0.5:51234".
func (r Record) Describe() string {
	s := r.Who.Name
	if r.Who.Fingerprint != "" {
		s += " (" + r.Who.Fingerprint + ")"
	}
	if r.Channel != "" {
		s += " via " + r.Channel
	}
	return s
}

// Of makes the record of a decision and its result.
func Of(storePath string, d store.Decision, run string, who Who, channel string, res store.DecideResult, err error, now time.Time) Record {
	r := Record{Time: now.UTC(), Store: storePath, Request: d.Key.String(), Run: run, Verdict: string(d.Verdict),
		Text: d.Text, Always: d.Always, Who: who, Channel: channel}
	var refused *store.RefusedError
	switch {
	case err == nil && res.Won:
		r.Outcome = Won
	case err == nil:
		r.Outcome = Lost
		r.Held = res.Decision
		if res.DecidedBy != "" {
			r.Held += " by " + res.DecidedBy
		}
	case errors.Is(err, ErrOutcomeUnknown):
		r.Outcome = Unknown
	case errors.As(err, &refused), errors.Is(err, store.ErrReadOnly):
		r.Outcome, r.Held = Refused, err.Error()
	default:
		r.Outcome, r.Held = Failed, err.Error()
	}
	return r
}
