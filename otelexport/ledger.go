package otelexport

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"go.opentelemetry.io/otel/trace"
)

// Ledger is what one endpoint has acknowledged of one store, kept in the
// user's state directory so an export that stops (Ctrl-C, a crash, an
// endpoint down for a day) resumes where the endpoint's acknowledgements
// end and never sends a span twice. It is a file of span ids, one per
// line in hex, appended (and synced) after every batch the endpoint took;
// a torn last line is ignored. The file is locked while an export holds
// it: two exports of one store to one endpoint at once are refused.
//
// The file is named by a hash of the store's identity, the endpoint and
// the service name; its first line says which, without credentials.
type Ledger struct {
	f    *os.File
	path string
	ids  map[trace.SpanID]bool
}

// ErrLedgerBusy says another export holds the ledger.
var ErrLedgerBusy = errors.New("another vigil otel is exporting this store to this endpoint")

// StateDir is where vigil keeps ledgers: $XDG_STATE_HOME/vigil/otel, else
// ~/.local/state/vigil/otel. getenv reads the environment.
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vigil", "otel"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find a state directory: neither $XDG_STATE_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".local", "state", "vigil", "otel"), nil
}

// OpenLedger opens (creating it) the ledger of storeID's spans at endpoint
// under service, in dir.
func OpenLedger(dir, storeID, endpoint, service string) (*Ledger, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot keep export progress: %w", err)
	}
	sum := sha256.Sum256([]byte(strconv.Quote(storeID) + " " + strconv.Quote(endpoint) + " " + strconv.Quote(service)))
	path := filepath.Join(dir, hex.EncodeToString(sum[:12])+".ids")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot keep export progress: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked)", ErrLedgerBusy, path)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	l := &Ledger{f: f, path: path, ids: map[trace.SpanID]bool{}}
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		lines++
		line := sc.Text()
		if len(line) != 16 {
			continue // the header, or a torn line
		}
		var id trace.SpanID
		if _, err := hex.Decode(id[:], []byte(line)); err == nil {
			l.ids[id] = true
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if lines == 0 {
		header := fmt.Sprintf("# vigil otel: what %s acknowledged of store %s (service %s)\n",
			strconv.Quote(Display(endpoint)), strconv.Quote(storeID), strconv.Quote(service))
		if _, err := f.WriteString(header); err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
	} else if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		// A torn last line (a crash mid-append) must not swallow the next id.
		buf := make([]byte, 1)
		if _, err := f.ReadAt(buf, fi.Size()-1); err == nil && buf[0] != '\n' {
			f.WriteString("\n")
		}
	}
	return l, nil
}

// Path is the ledger's file.
func (l *Ledger) Path() string { return l.path }

// Len is how many ids the ledger holds.
func (l *Ledger) Len() int { return len(l.ids) }

// Has reports whether the endpoint acknowledged id.
func (l *Ledger) Has(id trace.SpanID) bool { return l.ids[id] }

// Add records ids as acknowledged, durably.
func (l *Ledger) Add(ids []trace.SpanID) error {
	if len(ids) == 0 {
		return nil
	}
	buf := make([]byte, 0, len(ids)*17)
	for _, id := range ids {
		if l.ids[id] {
			continue
		}
		l.ids[id] = true
		buf = hex.AppendEncode(buf, id[:])
		buf = append(buf, '\n')
	}
	if len(buf) == 0 {
		return nil
	}
	if _, err := l.f.Write(buf); err != nil {
		return fmt.Errorf("cannot record export progress in %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("cannot record export progress in %s: %w", l.path, err)
	}
	return nil
}

// Close releases the ledger.
func (l *Ledger) Close() error { return l.f.Close() }
