package ioharness

import (
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Format is the name io-harness stores register under.
const Format = "io-harness"

// io-harness is the fallback format: a path no other format claims is
// opened as an io-harness store, whose refusal ("not a SQLite database",
// "without io-harness's runs and steps tables") says what the path is not.
func init() {
	store.Register(store.Format{
		Name:     Format,
		Detect:   Detect,
		Open:     func(path string, opts store.Options) (store.Core, error) { return Open(path, opts) },
		Files:    []string{"runs.sqlite3"},
		Fallback: true,
	})
}

// Detect reports whether path opens as an io-harness store (read-only,
// closed again at once).
func Detect(path string) bool {
	s, err := OpenReadOnly(path)
	if err != nil {
		return false
	}
	s.Close()
	return true
}

var (
	_ store.Core          = (*Store)(nil)
	_ store.Tracer        = (*Store)(nil)
	_ store.RequestGetter = (*Store)(nil)
	_ store.RunGetter     = (*Store)(nil)
)

// Format names this store's format.
func (s *Store) Format() string { return Format }

// Classify applies io-harness's delivery rules: the request's standing
// (an orphan is refused, a parked request deferred), then the run's end and
// who drives it (ClassifyDelivery).
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved {
		return store.Closed, "already decided (" + req.Decision + ")"
	}
	return classify(req, run, lease, s.RecordsLeases(), now)
}

// Watch is the store file, its WAL and rollback journal, and PRAGMA
// data_version on the read connection.
func (s *Store) Watch() store.WatchSpec { return sqlitex.WatchSpec(s.path, s.DataVersion) }
