package tui

import (
	"os"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/store"
)

// Who decided a request decided in this explorer (or by vigil approve, or
// vigil serve run by this user) is in the per-user audit log, when the
// store records nobody. Under vigil serve the session's store names them
// already (serve's hub reads its own log), and no path is kept.

func localAuditPath() string {
	p, err := audit.LocalPath(os.Getenv)
	if err != nil {
		return "" // no state directory: the store's own record stands
	}
	return p
}

// nameDeciders names the deciders the log at path knows. A log that cannot
// be read leaves the store's record as it is: the decided list is not
// withheld for it.
func nameDeciders(path, storePath string, recs []store.DecisionRecord) {
	if path == "" {
		return
	}
	_ = audit.NameDeciders(path, storePath, recs)
}
