package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"

	// The formats vigil reads register themselves with store; nothing here
	// names one.
	_ "github.com/vigil-run/vigil/store/claudecode"
	_ "github.com/vigil-run/vigil/store/codex"
	_ "github.com/vigil-run/vigil/store/gate"
	_ "github.com/vigil-run/vigil/store/geminicli"
	_ "github.com/vigil-run/vigil/store/ioharness"
	_ "github.com/vigil-run/vigil/store/leviath"
	_ "github.com/vigil-run/vigil/store/opencode"
	_ "github.com/vigil-run/vigil/store/starweaver"
)

// session is an open store for one command.
type session struct {
	a      *app
	src    store.Source
	path   string // as the user named it (or as discovery found it)
	warned bool
	// wake is the source's wakeup when no file watcher can follow it (an
	// ssh:// store, several stores); nil: watch Source.Watch.
	wake func() (watch.Wakeup, error)
}

// warn says, one line each, what the source opened without — once, and
// without the problem the command is about to report as its error (show
// of a damaged run would otherwise say it twice).
func (s *session) warn(except error) {
	if s.warned {
		return
	}
	s.warned = true
	for _, err := range s.src.Problems() {
		if except != nil && err.Error() == except.Error() {
			continue
		}
		fmt.Fprintln(s.a.errOut(), "vigil: warning:", sanitize.Line(err.Error()))
	}
}

// withSource resolves the store a command reads, opens it, says what it
// opened without, runs fn and closes the store.
func (a *app) withSource(flag string, fn func(*session) error) error {
	return a.openSession(flag, true, fn)
}

// openSession is withSource; with warnFirst false, fn calls s.warn itself
// once it knows its error (or finds none).
func (a *app) openSession(flag string, warnFirst bool, fn func(*session) error) error {
	path, err := a.resolveStore(flag)
	if err != nil {
		return err
	}
	src, err := openSource(path, false)
	if err != nil {
		return err
	}
	defer closeWithin(closeWait, func() { src.Close() })
	s := &session{a: a, src: src, path: path}
	if warnFirst {
		s.warn(nil)
	}
	err = fn(s)
	s.warn(err)
	return err
}

// resolveStore picks the store: the one named, else $VIGIL_STORE, else the
// config file's store, else the first found in the usual places.
func (a *app) resolveStore(named string) (string, error) {
	if named != "" {
		return a.expandHome(named), nil
	}
	if env := a.getenv("VIGIL_STORE"); env != "" {
		return a.expandHome(env), nil
	}
	c, err := a.config()
	if err != nil {
		return "", err
	}
	if c.Store != "" {
		return a.expandHome(c.Store), nil
	}
	found, err := a.discover()
	if err != nil {
		return "", err
	}
	return found[0], nil
}

// named says whether the user named the store a command reads, on the
// command line, in $VIGIL_STORE or in the config file: when none did,
// every store discovery finds is read together.
func (a *app) named(names []string) (bool, error) {
	// A broken config is refused even when the store is named: every
	// command says so the same way, whatever it was given.
	if _, err := a.config(); err != nil {
		return false, err
	}
	if len(names) > 0 || a.getenv("VIGIL_STORE") != "" {
		return true, nil
	}
	c, err := a.config()
	return c.Store != "", err
}

func (a *app) expandHome(p string) string {
	if home := a.getenv("HOME"); home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// openSource opens the store at path in whichever registered format
// recognises it; a path none does is explained by the fallback format
// (io-harness).
func openSource(path string, readOnly bool) (store.Source, error) {
	return store.Open(path, store.Options{ReadOnly: readOnly})
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// notFoundError says where discovery looked.
type notFoundError struct{ tried [][2]string }

func (e *notFoundError) Error() string { return "no run store found" }

func (e *notFoundError) report() string {
	var b strings.Builder
	b.WriteString("vigil: no run store found; looked in:\n")
	w := 0
	for _, t := range e.tried {
		w = max(w, len(t[0]))
	}
	for _, t := range e.tried {
		fmt.Fprintf(&b, "  %-*s  %s\n", w, t[0], t[1])
	}
	b.WriteString("hint: run 'vigil demo' to watch a simulated run, or name a store with --store PATH (or $VIGIL_STORE)\n")
	return b.String()
}

// discover looks for stores in the usual places: the first harness store
// found (harnessStore's order), then every agent CLI's store where that CLI
// keeps it (each format's Home). It returns at least one path, or says
// where it looked.
func (a *app) discover() ([]string, error) {
	nf := &notFoundError{}
	tried := func(where, why string) { nf.tried = append(nf.tried, [2]string{where, why}) }
	var found []string
	if p := a.harnessStore(tried); p != "" {
		found = append(found, p)
	}
	for _, f := range store.Formats() {
		if f.Home == nil {
			continue
		}
		for _, p := range f.Home(a.getenv) {
			label := p
			if home := a.getenv("HOME"); home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
				label = "~" + p[len(home):]
			}
			switch {
			case !exists(p):
				tried(label, "not found ("+f.Name+")")
			case !detects(p):
				tried(label, "no "+f.Name+" sessions in it")
			default:
				found = append(found, p)
			}
		}
	}
	if len(found) == 0 {
		return nil, nf
	}
	return found, nil
}

// harnessStore is the first harness store found, in order: ./runs.sqlite3;
// other ./*.sqlite3 files that are run stores (io-harness ones, in
// practice), newest first; Starweaver's session database; Leviath's runs
// directory. "" when there is none (tried says where it looked).
func (a *app) harnessStore(tried func(where, why string)) string {

	// io-harness
	if isFile("runs.sqlite3") {
		return "runs.sqlite3"
	}
	tried("./runs.sqlite3", "not found")
	matches, _ := filepath.Glob("*.sqlite3")
	type cand struct {
		path string
		mod  int64
	}
	var cands []cand
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			cands = append(cands, cand{m, fi.ModTime().UnixNano()})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	for _, c := range cands {
		if _, ok := store.Detect(c.path); ok {
			return c.path
		}
	}
	if len(cands) == 0 {
		tried("./*.sqlite3", "none")
	} else {
		tried("./*.sqlite3", fmt.Sprintf("%d file(s), none a run store vigil reads", len(cands)))
	}

	home := a.getenv("HOME")
	inHome := func(rel string) (string, string) { // path, label
		if home == "" {
			return "", "~/" + rel
		}
		return filepath.Join(home, rel), "~/" + rel
	}

	// Starweaver
	if p := a.getenv("STARWEAVER_SESSION_DB"); p != "" {
		if isFile(p) {
			return p
		}
		tried("$STARWEAVER_SESSION_DB", p+": not found")
	} else {
		tried("$STARWEAVER_SESSION_DB", "not set")
	}
	if p := filepath.Join(".starweaver", "starweaver.sqlite"); isFile(p) {
		return p
	}
	tried("./.starweaver/starweaver.sqlite", "not found")
	if d := a.getenv("STARWEAVER_CONFIG_DIR"); d != "" {
		p := filepath.Join(d, "starweaver.sqlite")
		if isFile(p) {
			return p
		}
		tried("$STARWEAVER_CONFIG_DIR/starweaver.sqlite", p+": not found")
	}
	p, label := inHome(".starweaver/starweaver.sqlite")
	switch {
	case p == "":
		tried(label, "$HOME is not set")
	case isFile(p):
		return p
	default:
		tried(label, "not found")
	}

	// Leviath: $LEVIATH_RUNS_DIR, else <home>/.leviath/runs where <home> is
	// $LEVIATH_HOME or the home directory.
	var dir string
	if a.getenv("LEVIATH_RUNS_DIR") == "" {
		tried("$LEVIATH_RUNS_DIR", "not set")
	}
	switch {
	case a.getenv("LEVIATH_RUNS_DIR") != "":
		dir, label = a.getenv("LEVIATH_RUNS_DIR"), "$LEVIATH_RUNS_DIR"
	case a.getenv("LEVIATH_HOME") != "":
		dir, label = filepath.Join(a.getenv("LEVIATH_HOME"), ".leviath", "runs"), "$LEVIATH_HOME/.leviath/runs"
	default:
		dir, label = inHome(".leviath/runs")
	}
	switch {
	case dir == "":
		tried(label, "$HOME is not set")
	case !isDir(dir):
		if label[0] == '$' {
			tried(label, dir+": not found")
		} else {
			tried(label, "not found")
		}
	case !detects(dir):
		tried(label, "no runs in it")
	default:
		return dir
	}
	return ""
}

// detects reports whether some registered format recognises path.
func detects(path string) bool {
	_, ok := store.Detect(path)
	return ok
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
