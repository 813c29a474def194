package leviath

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

var bg = context.Background()

func openFx(t testing.TB) (*fixture, *Store) {
	t.Helper()
	fx := buildFixture(t, t.TempDir())
	s, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return fx, s
}

func steps(t testing.TB, s *Store, id string) []store.Step {
	t.Helper()
	st, err := s.Steps(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rowsText is a timeline as "N decision · tool call" lines.
func rowsText(st []store.Step) []string {
	var out []string
	for _, x := range st {
		line := fmt.Sprintf("%d %s", x.Number, x.Decision)
		if x.ToolCall != "" {
			line += " · " + x.ToolCall
		}
		out = append(out, line)
	}
	return out
}

func rowsOf(rows []store.StepRow) []string {
	var out []string
	for _, x := range rows {
		out = append(out, fmt.Sprintf("%d %s", x.Number, x.Decision))
	}
	return out
}

func sameLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func runByID(t testing.TB, s *Store, id string) store.Run {
	t.Helper()
	runs, err := s.Runs(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no run %s", id)
	return store.Run{}
}

// changes reads what came after *c and moves *c on to the next cursor.
func changes(t testing.TB, s *Store, c *store.Cursor) *store.Changes {
	t.Helper()
	ch, next, err := s.Changes(bg, *c)
	if err != nil {
		t.Fatal(err)
	}
	*c = next
	return ch
}

func head(t testing.TB, s *Store) store.Cursor {
	t.Helper()
	c, err := s.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func lvr(fx *fixture, id string) string { return filepath.Join(fx.runs, id, "run.lvr") }
