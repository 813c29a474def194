package leviath

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// walkStrings calls fn with every string (and byte slice) reachable from v,
// unexported fields included.
func walkStrings(v reflect.Value, fn func(path, s string)) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.String:
			fn(path, v.String())
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			walk(v.Elem(), path)
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				fn(path, string(v.Bytes()))
				return
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Key(), path+"{key}")
				walk(it.Value(), path+"{"+fmt.Sprint(it.Key())+"}")
			}
		}
	}
	walk(v, "")
}

// The callback_secret sits in meta.json and in every Header, Progress and
// Checkpoint frame (and in the callback URL): nothing vigil returns holds
// it, and neither does anything vigil keeps.
func TestSecretNeverReturned(t *testing.T) {
	fx, s := openFx(t)
	raw, _ := os.ReadFile(lvr(fx, idRoot))
	meta, _ := os.ReadFile(filepath.Join(fx.runs, idRoot, "meta.json"))
	if !strings.Contains(string(raw), secret) || !strings.Contains(string(meta), `"callback_secret": "`+secret+`"`) {
		t.Fatal("the fixture does not carry the secret")
	}
	var found []string
	check := func(what string, v any) {
		walkStrings(reflect.ValueOf(v), func(path, str string) {
			if strings.Contains(str, secret) {
				found = append(found, what+path)
			}
		})
	}
	c := head(t, s)
	// Make every kind of change happen once, so Changes returns everything.
	g := fx.gens[idVersion]
	g.meta.status = "running"
	g.progress(t0+90, g.appendD("conversation", turnE("Answered.")))
	fx.gens[idChangelog].usage(t0+21, "stage", 10, 1, 0, 0)
	check("Changes", changes(t, s, &c))
	runs, _ := s.Runs(bg)
	check("Runs", runs)
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
		st, _ := s.Steps(bg, r.ID)
		check("Steps", st)
		for _, x := range st {
			d, _ := s.StepDetail(bg, r.ID, x.RowID)
			check("StepDetail", d)
		}
		cs, _ := s.ContextSamples(bg, r.ID)
		check("ContextSamples", cs)
		pc, _ := s.ProviderCalls(bg, r.ID)
		check("ProviderCalls", pc)
		ev, _ := s.AgentEvents(bg, r.ID)
		check("AgentEvents", ev)
	}
	stats, _ := s.RunStats(bg, ids)
	check("RunStats", stats)
	reqs, _ := s.Requests(bg, false)
	check("Requests", reqs)
	check("Problems", s.Problems())
	_, err := s.Decide(bg, store.Decision{Key: reqs[0].Key()})
	check("Decide", err)
	// What vigil keeps in memory, every struct of it.
	s.mu.Lock()
	check("Store", s)
	s.mu.Unlock()
	// And the explorer's screen.
	e := newExplorer(t, s, 200, 60, time.Unix(t0+600, 0))
	check("screen", e.screen())
	if len(found) > 0 {
		t.Fatalf("the secret is in: %s", strings.Join(found, ", "))
	}
}

type fileState struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	sum   [32]byte
	names string
}

// snapshot records every file and directory under dir: mode, size, mtime,
// content (files) and entries (directories).
func snapshot(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
		if d.IsDir() {
			ents, _ := os.ReadDir(p)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			st.names, st.size = strings.Join(names, "/"), 0
		} else {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.sum = sha256.Sum256(b)
		}
		out[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A full browse (every method, the explorer, the single-run opens, a
// refused decision) leaves every byte and mtime as it was.
func TestNeverWrites(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	before := snapshot(t, fx.home)
	time.Sleep(10 * time.Millisecond) // a write now would show in an mtime
	for _, p := range []string{fx.runs, filepath.Join(fx.runs, idRoot), lvr(fx, idVersion)} {
		s, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		c := head(t, s)
		runs, _ := s.Runs(bg)
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
			st, _ := s.Steps(bg, r.ID)
			for _, x := range st {
				s.StepDetail(bg, r.ID, x.RowID)
			}
			s.ContextSamples(bg, r.ID)
			s.ProviderCalls(bg, r.ID)
			s.AgentEvents(bg, r.ID)
		}
		s.RunStats(bg, ids)
		reqs, _ := s.Requests(bg, false)
		for _, q := range reqs {
			s.Decide(bg, store.Decision{Key: q.Key(), Text: "yes"})
		}
		changes(t, s, &c)
		s.Watch().Version()
		s.Problems()
		e := newExplorer(t, s, 200, 60, time.Unix(t0+600, 0))
		e.press("6", "j", "2", "j", "j", "3", "k", "5")
		s.Close()
	}
	Detect(fx.runs)
	Detect(lvr(fx, idRoot))
	after := snapshot(t, fx.home)
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s changed: %+v → %+v", p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
}

func TestDetect(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "plain", "sub"), 0o700)
	os.WriteFile(filepath.Join(other, "runs.sqlite3"), []byte("SQLite format 3\x00"), 0o600)
	os.WriteFile(filepath.Join(other, "run.lvr"), []byte("LVR2"), 0o600)
	os.MkdirAll(filepath.Join(other, "jsononly", "r"), 0o700)
	os.WriteFile(filepath.Join(other, "jsononly", "r", "meta.json"), []byte(`{"hello": 1}`), 0o600)
	for path, want := range map[string]bool{
		fx.runs:                                true,
		filepath.Join(fx.runs, idRoot):         true,
		lvr(fx, idRoot):                        true,
		filepath.Join(fx.runs, idQueued):       true, // meta.json only
		fx.home:                                false,
		filepath.Join(fx.home, "machine-id"):   false,
		filepath.Join(other, "plain"):          false,
		filepath.Join(other, "runs.sqlite3"):   false,
		filepath.Join(other, "run.lvr"):        false,
		filepath.Join(other, "jsononly"):       false,
		filepath.Join(other, "does-not-exist"): false,
	} {
		if got := Detect(path); got != want {
			t.Errorf("Detect(%s) = %v, want %v", path, got, want)
		}
	}
}

// Refusals are one line each, typed with the store package's sentinels.
func TestOpenRefusals(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	empty := t.TempDir()
	plain := t.TempDir()
	os.MkdirAll(filepath.Join(plain, "a", "b"), 0o700)
	for _, c := range []struct {
		path string
		kind error
		says []string
	}{
		{filepath.Join(fx.home, "nope"), store.ErrNotFound, []string{"no such file or directory"}},
		{filepath.Join(fx.home, "machine-id"), store.ErrNotAStore, []string{"a file, not a Leviath runs directory"}},
		{empty, store.ErrNotAStore, []string{"not a Leviath runs directory"}},
		{plain, store.ErrNotAStore, []string{"not a Leviath runs directory"}},
		{filepath.Join(fx.runs, idFuture), store.ErrNewerFormat, []string{"journal format version 2", "version 1", "upgrade vigil"}},
		{lvr(fx, idFuture), store.ErrNewerFormat, []string{"version 2"}},
		{filepath.Join(fx.runs, idGarbage), store.ErrCorrupt, []string{`not a Leviath journal: it starts "PK..", not "LVR1"`}},
	} {
		_, err := Open(c.path)
		if !errors.Is(err, c.kind) {
			t.Errorf("Open(%s): %v, want %v", c.path, err, c.kind)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, filepath.Base(c.path)) {
			t.Errorf("Open(%s): %q is not one line naming the path", c.path, msg)
		}
		for _, w := range c.says {
			if !strings.Contains(msg, w) {
				t.Errorf("Open(%s): %q lacks %q", c.path, msg, w)
			}
		}
		var le *store.Error
		if !errors.As(err, &le) {
			t.Errorf("Open(%s): %T is not a *store.Error", c.path, err)
		}
	}
	// In a runs directory the same runs are listed and explained, not fatal.
	s, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Steps(bg, idFuture); !errors.Is(err, store.ErrNewerFormat) {
		t.Errorf("Steps of the newer journal: %v", err)
	}
	if _, err := s.Steps(bg, idGarbage); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Steps of the bad magic: %v", err)
	}
	ps := s.Problems()
	if len(ps) != 2 || !errors.Is(ps[0], store.ErrNewerFormat) || !errors.Is(ps[1], store.ErrCorrupt) {
		t.Errorf("problems: %v", ps)
	}
}

// Leviath files are 0600: another user's runs are refused with a clear
// line (not testable as root, which reads everything).
func TestUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads 0000 files")
	}
	fx := buildFixture(t, t.TempDir())
	os.Chmod(lvr(fx, idRoot), 0)
	os.Chmod(filepath.Join(fx.runs, idRoot, "meta.json"), 0)
	defer os.Chmod(lvr(fx, idRoot), 0o600)
	s, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Steps(bg, idRoot); !errors.Is(err, store.ErrIO) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("unreadable journal: %v", err)
	}
	os.Chmod(fx.runs, 0)
	defer os.Chmod(fx.runs, 0o700)
	if _, err := Open(fx.runs); !errors.Is(err, store.ErrIO) {
		t.Errorf("unreadable runs directory: %v", err)
	}
}

// A single run directory holds that run and the runs below it, including
// sub-agents that appear later.
func TestSingleRunDirectory(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	ids := func(s *Store) string {
		runs, err := s.Runs(bg)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	for path, want := range map[string]string{
		filepath.Join(fx.runs, idRoot):      strings.Join([]string{idChangelog, idLinks, idRoot, idVersion}, " "),
		filepath.Join(fx.runs, idChangelog): idChangelog + " " + idLinks,
		lvr(fx, idVersion):                  idVersion,
	} {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(s); got != want {
			t.Errorf("Open(%s): %s, want %s", path, got, want)
		}
		if s.Path() != path || s.Root() != fx.runs || s.Watch().Path != fx.runs {
			t.Errorf("paths: %s %s %s", s.Path(), s.Root(), s.Watch().Path)
		}
		s.Close()
	}
	s, err := Open(filepath.Join(fx.runs, idChangelog))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := head(t, s)
	kid := baseMeta("formatter-1785428100-0d1d2d3d4d5d", "formatter", "Format the entry", t0+800)
	kid.parent, kid.depth = idLinks, 3
	newGenRun(t, fx.runs, kid, false, stdRegions(kid.task)...)
	stranger := baseMeta("stranger-1785428200-0e1e2e3e4e5e", "stranger", "Not ours", t0+900)
	newGenRun(t, fx.runs, stranger, false, stdRegions(stranger.task)...)
	ch := changes(t, s, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != kid.runID {
		t.Errorf("new runs: %+v", ch.Runs)
	}
}

// Unknown variants are skipped (records and region deltas); a known
// record that does not decode is skipped with a row saying so; a frame that
// is not JSON stops the read until a restart, and says so.
func TestSkipsAndDamage(t *testing.T) {
	fx, s := openFx(t)
	if rs := s.runs[idRoot]; rs.skipped != 2 {
		t.Errorf("skipped %d unknown records, want 2 (Telemetry, Heartbeat)", rs.skipped)
	}
	c := head(t, s)
	g := fx.gens[idRoot]
	bad := frame(tagged("Progress", ordered{{"meta", ordered{{"pid", "not a number"}}}, {"at", t0 + 61}}))
	at := fileSize(t, lvr(fx, idRoot))
	g.appendBytes(bad)
	g.progress(t0+62, g.appendD("conversation", userE("after a bad record")))
	ch := changes(t, s, &c)
	sameLines(t, "rows", rowsOf(ch.Steps), []string{
		fmt.Sprintf("3 journal: skipped a Progress record at byte %d that does not decode (Progress.meta.pid: a JSON string where int64 belongs)", at),
		"3 user: after a bad record",
	})
	// Not JSON: the read stops there, and the timeline says so once.
	junk := []byte("\x00\x00\x00\x00\x00\x00\x00\x05{{{{{")
	at = fileSize(t, lvr(fx, idRoot))
	g.appendBytes(junk)
	g.progress(t0+63, g.appendD("conversation", userE("unreadable: after the damage")))
	ch = changes(t, s, &c)
	sameLines(t, "damage", rowsOf(ch.Steps), []string{
		fmt.Sprintf("3 journal: the frame at byte %d is damaged; nothing after it can be read until the daemon restarts the run", at)})
	if ch := changes(t, s, &c); len(ch.Steps) != 0 {
		t.Errorf("noted twice: %+v", ch.Steps)
	}
	if ps := s.Problems(); len(ps) != 3 || !errors.Is(ps[0], store.ErrCorrupt) || !strings.Contains(ps[0].Error(), fmt.Sprintf("damaged frame at byte %d", at)) {
		t.Errorf("problems: %v", ps)
	}
	// The daemon restarts: reading resumes at its first frame.
	g.restart(t0+70, "2222222222222222")
	ch = changes(t, s, &c)
	got := rowsOf(ch.Steps)
	if len(got) != 3 || !strings.HasPrefix(got[0], fmt.Sprintf("3 journal: bytes %d to ", at)) ||
		!strings.HasPrefix(got[1], "3 restart:") || got[2] != "3 user: unreadable: after the damage" {
		t.Errorf("after the restart: %q", got)
	}
}

// A journal the daemon is just starting (fewer bytes than the preamble)
// is a run with nothing to show yet, not an error; it fills in as it grows.
func TestJournalBeingStarted(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	dir := filepath.Join(fx.runs, "fresh-1785429100-0f1f2f3f4f5f")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "run.lvr"), []byte("LV"), 0o600)
	ch := changes(t, s, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].Goal != "(starting)" || ch.Runs[0].Status != "running" || ch.Runs[0].Lease == nil {
		t.Fatalf("runs: %+v", ch.Runs)
	}
	if _, err := s.Steps(bg, "fresh-1785429100-0f1f2f3f4f5f"); err != nil {
		t.Errorf("steps: %v", err)
	}
	m := baseMeta("fresh-1785429100-0f1f2f3f4f5f", "fresh", "Just started", t0+900)
	g := &genRun{t: t, dir: dir, meta: m, machine: "5c1e0f9a7b3d2e48", world: "a91f3c0de4b27766", regions: stdRegions(m.task)}
	g.appendBytes(append(preamble(1)[2:], append(g.headerFrame(), g.checkpointFrame()...)...))
	g.writeMeta()
	ch = changes(t, s, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].Goal != "Just started" || len(ch.Steps) != 1 || ch.Steps[0].Decision != "user: Just started" {
		t.Errorf("after the rest: runs %+v rows %q", ch.Runs, rowsOf(ch.Steps))
	}
}
