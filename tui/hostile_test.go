package tui

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/views"
)

// evil is text a model could put anywhere: escape sequences that set the
// window title, clear the screen and query the terminal, C1 controls, a bidi
// override, a NUL, invalid UTF-8.
const evil = "ok \x1b]0;pwned\x07\x1b]2;pwned\x1b\\\x1b[2J\x1b[H\x1bP+q544e\x1b\\\x9b31m\u202Eexe.txt\x00\xff\xfe end"

// hostileStore writes a store made to break a viewer: hostile text in every
// field, a 10 MB result, a tree 50 agents deep, and a cycle in parent_run_id.
func hostileStore(t *testing.T) string {
	t.Helper()
	path, w := createdStore(t, "hostile.sqlite3")
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	root, err := w.StartRun(ctx, evil, evil)
	must(err)
	_, err = w.AcquireLease(ctx, root, time.Hour)
	must(err)
	big := strings.Repeat(evil+"\n", 10<<20/len(evil))
	must(w.RecordContextEvent(ctx, root, 1, harness.ContextAssembled, evil, ptr[int64](10)))
	must(w.CheckpointStep(ctx, root, harness.StepRecord{Step: 1, Decision: evil, ToolCall: evil, Result: big, Prompt: big, Tokens: 10,
		Turn: &harness.Turn{Text: ptr(evil)}}))
	must(w.RecordObservations(ctx, root, []store.Observation{{Step: 1, Kind: evil, Target: evil, Text: evil}}))
	must(w.RecordEdit(ctx, root, 1, store.Edit{Tool: evil, Path: evil, Hunk: evil}))
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: root, Step: 1, Kind: store.PolicyRefusal, Act: evil, Target: evil, Rule: evil, Layer: evil}))
	must(w.RecordAgentEvent(ctx, store.AgentEvent{RunID: root, Step: 1, Kind: store.AgentSpawnRefused, Detail: evil}))
	_, err = w.PutPending(ctx, root, 1, evil, evil, ptr(big))
	must(err)
	_, err = w.PutQuestion(ctx, root, 1, evil, evil, []string{evil, evil})
	must(err)
	_, err = w.PutPlan(ctx, root, 1, []store.PlanStep{{Intent: evil, Agent: evil}})
	must(err)
	parent := root
	for d := 1; d <= 50; d++ {
		parent, err = w.StartChildRun(ctx, fmt.Sprintf("depth %d %s", d, evil), evil, parent, d)
		must(err)
	}
	// Two runs that are each other's parent: a damaged store.
	a, err := w.StartRun(ctx, "cycle a", "/w")
	must(err)
	b, err := w.StartChildRun(ctx, "cycle b", "/w", a, 1)
	must(err)
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String())
	must(err)
	defer db.Close()
	_, err = db.Exec("UPDATE runs SET parent_run_id = ? WHERE id = ?", b, a)
	must(err)
	return path
}

func fileSum(t *testing.T, path string) [32]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// A hostile store browsed through every pane: no panic, nothing from the
// data reaches the terminal as a control, and the store file is unchanged.
func TestHostileStore(t *testing.T) {
	path := hostileStore(t)
	before := fileSum(t, path)
	d := openDriver(t, path, 160, 50, func(o *Options) { o.StoreLabel = "hostile.sqlite3" })
	d.m.env.Theme = views.PlainTheme()
	// The plain theme styles nothing, so the only escapes left are the
	// text inputs' own colours (SGR): anything else came from the data.
	sgr := regexp.MustCompile(`\x1b\[[0-9;:]*m`)
	check := func(where string) {
		t.Helper()
		frame := sgr.ReplaceAllString(d.m.Render(), "")
		if strings.ContainsRune(frame, 0x1b) || !sanitize.Safe(frame) {
			t.Fatalf("%s: a control from the store reached the frame:\n%q", where, frame)
		}
	}
	check("start")
	steps := [][]string{
		{"1", "j", "j", "enter"}, {"2", "G", "g"}, {"3", "k", "enter"}, {"4", "G", "pgup", "g"}, {"5", "j"},
		{"6", "j", "j", "k"}, {"?"}, {"?"}, {"1", "/"}, {"esc"}, {"s", "s", "s"},
	}
	for _, keys := range steps {
		d.press(keys...)
		d.advance(2 * time.Second)
		check(strings.Join(keys, " "))
	}
	d.contains("␛]0;pwned␇", "cycle a")       // the loop's smallest id shows as a root
	d.press("1", "G", "k", "enter", "2", "G") // the deepest agent of the evil tree
	check("deep tree")
	d.contains("depth 50")
	d.press("q")
	d.m.src.Close()
	if fileSum(t, path) != before {
		t.Error("browsing changed the store file")
	}
}

// The window title is vigil's own: nothing from the store reaches it.
func TestWindowTitleIsOurs(t *testing.T) {
	path := hostileStore(t)
	d := openDriver(t, path, 120, 40)
	if title := d.m.View().WindowTitle; title != "vigil — hostile.sqlite3" {
		t.Errorf("window title = %q", title)
	}
}

func ptr[T any](v T) *T { return &v }
