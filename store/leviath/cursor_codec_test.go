package leviath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// resumed is what a reader got from a cursor, in an order that does not
// depend on how the source pages it: each run's rows in row order, the
// rest by key, each key once (as the reader folds it: the last one given
// stands).
type resumed struct {
	Runs     []string
	Steps    map[string][]string // run → "id decision"
	Context  []string
	Calls    []string
	Requests []string
	Reset    bool
	Reason   string
	Token    []byte `json:",omitempty"`
}

func collect(t testing.TB, s *Store, cur store.Cursor) (resumed, store.Cursor) {
	t.Helper()
	r := resumed{Steps: map[string][]string{}}
	runs, ctx, calls, reqs := map[string]bool{}, map[string]string{}, map[string]string{}, map[string]string{}
	seenRow := map[int64]bool{}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("Changes says More for ever")
		}
		ch, next, err := s.Changes(bg, cur)
		if err != nil {
			t.Fatal(err)
		}
		cur = next
		if ch.Reset {
			r.Reset = true
			if why, ok := next.(store.ResetReason); ok {
				r.Reason = why.ResetReason()
			}
			return r, cur
		}
		for _, x := range ch.Runs {
			runs[x.ID] = true
		}
		for _, x := range ch.Steps {
			if seenRow[x.RowID] {
				t.Errorf("row %d (%s) came twice", x.RowID, x.Decision)
			}
			seenRow[x.RowID] = true
			r.Steps[x.RunID] = append(r.Steps[x.RunID], fmt.Sprintf("%d %s", x.RowID, x.Decision))
		}
		for _, x := range ch.Context {
			b, _ := json.Marshal(x)
			ctx[fmt.Sprintf("%s/%d", x.RunID, x.RowID)] = string(b)
		}
		for _, x := range ch.Calls {
			b, _ := json.Marshal(x)
			calls[fmt.Sprintf("%s/%d", x.RunID, x.RowID)] = string(b)
		}
		for _, x := range ch.Requests {
			b, _ := json.Marshal(x)
			reqs[x.Key().String()] = string(b)
		}
		if !ch.More {
			break
		}
	}
	r.Runs = sortedSet(runs)
	r.Context, r.Calls, r.Requests = sortedVals(ctx), sortedVals(calls), sortedVals(reqs)
	return r, cur
}

func sortedSet(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedVals(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}

// inAnotherProcess resumes token on runs in a new process (this test
// binary again: its own hash seed, its own everything), as vigil agent
// started for a new link does, and returns what it got and its next
// token.
func inAnotherProcess(t *testing.T, runs string, token []byte) resumed {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "token")
	if err := os.WriteFile(in, token, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VIGIL_LEV_CHILD_RUNS="+runs, "VIGIL_LEV_CHILD_TOKEN="+in, "VIGIL_LEV_CHILD_PAGE="+fmt.Sprint(changesPage))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the other process: %v\n%s\n%s", err, out.Bytes(), errb.Bytes())
	}
	line := out.Bytes()
	i := bytes.Index(line, []byte("RESUMED "))
	if i < 0 {
		t.Fatalf("the other process said nothing:\n%s\n%s", out.Bytes(), errb.Bytes())
	}
	line = line[i+len("RESUMED "):]
	line = line[:bytes.IndexByte(line, '\n')]
	var r resumed
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResumeChild is the other process of inAnotherProcess.
func TestResumeChild(t *testing.T) {
	runs := os.Getenv("VIGIL_LEV_CHILD_RUNS")
	if runs == "" {
		t.Skip("the other process of the cursor tests")
	}
	fmt.Sscan(os.Getenv("VIGIL_LEV_CHILD_PAGE"), &changesPage)
	token, err := os.ReadFile(os.Getenv("VIGIL_LEV_CHILD_TOKEN"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cur, err := s.DecodeCursor(token)
	if err != nil {
		t.Fatal(err)
	}
	r, next := collect(t, s, cur)
	if r.Token, err = s.EncodeCursor(next); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	fmt.Printf("RESUMED %s\n", b)
}

// outage writes, as Leviath's daemon would while a reader's link is down:
// new rows in the root run, a provider count for its newest replay point,
// the waiting run answered, and a run directory that was not there.
func outage(t *testing.T, fx *fixture) {
	r := fx.gens[idRoot]
	r.meta.iteration, r.meta.prompt, r.meta.completion = 4, 5000, 260
	r.progress(t0+60, r.appendD("conversation", userE("publish now"), turnE("Publishing.",
		genCall{"toolu_A9", "bash", args("command", "make publish")}), resultE("toolu_A9", "bash", "published 2.4.0", false)))
	r.usage(t0+61, "stage", 2100, 90, 0, 0)
	r.progress(t0+62, r.appendD("conversation", turnE("Published.")))
	v := fx.gens[idVersion]
	v.status(t0+63, "running")
	m := baseMeta("publisher-1785427900-0c1c2c3c4c5c", "publisher", "Publish 2.4.0", t0+700)
	m.parent, m.depth = idRoot, 1
	g := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	g.meta.prompt, g.meta.completion = 300, 10
	g.progress(t0+705, g.appendD("conversation", turnE("Publishing to the index.")))
}

// A cursor written down by one process and read back by another opened on
// the same runs directory tells exactly what the original cursor tells in
// its own process: every row written in between once (ids and all), the
// provider count that arrived for a replay point already handed out, the
// answered prompt, the new run; then nothing more. The same a page at a
// time.
func TestCursorResumesInAnotherProcess(t *testing.T) {
	for _, page := range []int{ChangesPage, 2} {
		t.Run(fmt.Sprintf("page %d", page), func(t *testing.T) {
			old := changesPage
			changesPage = page
			defer func() { changesPage = old }()
			fx, s := openFx(t)
			cur := head(t, s)
			token, err := s.EncodeCursor(cur)
			if err != nil {
				t.Fatal(err)
			}
			back, err := s.DecodeCursor(token)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := s.EncodeCursor(back); err != nil || !bytes.Equal(again, token) {
				t.Fatalf("written again:\n%s\nfirst:\n%s (%v)", again, token, err)
			}
			outage(t, fx)
			want, _ := collect(t, s, cur)
			if len(want.Steps[idRoot]) != 4 || len(want.Requests) != 1 || !strings.Contains(want.Requests[0], `"Resolved":true`) || len(want.Runs) != 2 {
				t.Fatalf("the outage wrote less than it should: %+v", want)
			}
			got := inAnotherProcess(t, fx.runs, token)
			next := got.Token
			got.Token = nil
			if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
				t.Fatalf("resumed in another process:\n%s\nthe cursor's own process:\n%s", g, w)
			}
			// Nothing more, in a third process.
			if again := inAnotherProcess(t, fx.runs, next); again.Reset || len(again.Runs)+len(again.Steps)+len(again.Context)+len(again.Calls)+len(again.Requests) != 0 {
				t.Errorf("a third process after the second's cursor: %+v", again)
			}
		})
	}
}

// A journal written over in place (same file, other bytes), shortened, or
// a run directory deleted: the other process answers Reset and says why.
func TestCursorOfARewrittenJournalResets(t *testing.T) {
	for _, c := range []struct {
		name, why string
		do        func(t *testing.T, fx *fixture)
	}{
		{"written over", "was written over", func(t *testing.T, fx *fixture) {
			p := lvr(fx, idRoot)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// The same length and header, another task in the first job.
			i := bytes.Index(b, []byte("Coordinate the"))
			copy(b[i:], "Coordinate THE")
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(b, 0)
			f.Close()
		}},
		{"shortened", "shorter", func(t *testing.T, fx *fixture) {
			os.Truncate(lvr(fx, idRoot), fileSize(t, lvr(fx, idRoot))-10)
		}},
		{"deleted", "is gone", func(t *testing.T, fx *fixture) {
			os.RemoveAll(filepath.Dir(lvr(fx, idChangelog)))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx, s := openFx(t)
			token, err := s.EncodeCursor(head(t, s))
			if err != nil {
				t.Fatal(err)
			}
			ino := inodeOfPath(t, lvr(fx, idRoot))
			c.do(t, fx)
			if c.name == "written over" && inodeOfPath(t, lvr(fx, idRoot)) != ino {
				t.Fatal("the journal was not written over in place")
			}
			got := inAnotherProcess(t, fx.runs, token)
			if !got.Reset || !strings.Contains(got.Reason, c.why) {
				t.Fatalf("resumed over a journal %s: %+v; want Reset saying %q", c.name, got, c.why)
			}
			// The cursor given with the Reset is a good one.
			if again := inAnotherProcess(t, fx.runs, got.Token); again.Reset {
				t.Errorf("the cursor after the Reset resets too: %+v", again)
			}
		})
	}
}

func inodeOfPath(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return inodeOf(fi)
}
