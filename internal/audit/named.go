package audit

import (
	"path/filepath"

	"github.com/vigil-run/vigil/store"
)

// LocalPath is the per-user log: where the explorer, vigil approve … and
// vigil serve (run by this user) record decisions.
func LocalPath(getenv func(string) string) (string, error) {
	dir, err := StateDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, FileName), nil
}

// NameDeciders names who decided each record that was decided through
// vigil, from the log at path: the store often records nobody (an
// io-harness approval) or only a channel ("attached"). A log line names a
// record only when it won in this store and decided what the store holds;
// what the store records follows it in brackets.
func NameDeciders(path, storePath string, recs []store.DecisionRecord) error {
	won, err := Winners(path, storePath, StoreID(storePath))
	if err != nil || len(won) == 0 {
		return err
	}
	for i := range recs {
		r := &recs[i]
		line, ok := won[r.Key().String()]
		if !ok || !line.decided(r.Request) {
			continue
		}
		name := line.Describe()
		if r.Channel != "" && r.Channel != name {
			name += " (" + r.Channel + " in the store)"
		}
		r.Channel = name
	}
	return nil
}

// decided reports whether the line decided what the store holds of q (a
// store since replaced may reuse the id for another request).
func (r Record) decided(q store.Request) bool {
	if q.Kind == store.Question {
		return r.Text == q.Decision
	}
	return r.Verdict == q.Decision
}
