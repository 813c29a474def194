package opencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/opencode"
)

// askingServer is a real `opencode serve` with bash set to "ask", whose
// session's model runs `echo ok > approved.txt`.
func askingServer(t *testing.T) (*agentcli.Served, string) {
	t.Helper()
	a := agentcli.Need(t, "opencode")
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "bash", Args: map[string]any{"command": "echo ok > approved.txt", "description": "write approved.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = agentcli.OpencodePermissions(map[string]any{"bash": "ask", "edit": "allow"})
	s := a.Serve(t, srv.URL, 240*time.Second)
	t.Setenv(opencode.ServerEnv, s.URL)
	t.Setenv("XDG_STATE_HOME", filepath.Join(s.Home, ".local", "state"))
	return s, s.Prompt(t, "Write ok. [vigil:main]")
}

// changesUntil follows src from cur until a change carries a request ok
// accepts, and returns it with the cursor after it.
func changesUntil(t *testing.T, src store.Source, cur store.Cursor, what string, ok func(store.Request) bool) (store.Request, store.Cursor) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ch, next, err := src.Changes(context.Background(), cur)
		if err != nil {
			t.Fatal(err)
		}
		cur = next
		for _, r := range ch.Requests {
			if ok(r) {
				return r, cur
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no change brought %s", what)
	return store.Request{}, nil
}

// A permission opencode asks shows as an approval of its session, linked
// to the tool call it gates and carrying its whole input; answered in
// opencode itself (its TUI replies through the same route as any client,
// POST /permission/{id}/reply), it shows decided by opencode with the
// reason, read from the call's error (Permission.reply: CorrectedError),
// and a decision after it is told so.
func TestRealOpencodePermissionAnsweredInOpencode(t *testing.T) {
	s, session := askingServer(t)
	ctx := context.Background()
	db := filepath.Join(s.Home, ".local", "share", "opencode", "opencode.db")
	var src store.Source
	for deadline := time.Now().Add(60 * time.Second); src == nil; {
		if x, err := store.Open(db, store.Options{}); err == nil {
			src = x
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() { src.Close() })
	if ro, why := src.ReadOnly(); ro {
		t.Fatalf("read-only: %s", why)
	}
	src.Watch() // follows the server's events from here
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, cur := changesUntil(t, src, cur, "the permission request", func(r store.Request) bool { return !r.Resolved })
	if req.Kind != store.Approval || !strings.HasPrefix(req.ID, "per_") || req.RunID != session || req.Step != 1 ||
		req.Act != "exec" || req.Target != "bash: echo ok > approved.txt" || !strings.Contains(req.Content, `"command":"echo ok > approved.txt"`) ||
		req.AskedAt.IsZero() || !req.Waits() {
		t.Fatalf("the request: %+v", req)
	}
	waiting, err := src.Requests(ctx, true)
	if err != nil || len(waiting) != 1 || waiting[0].ID != req.ID {
		t.Fatalf("waiting requests %+v %v", waiting, err)
	}
	if !src.CarriesReason(store.Approval, store.VerdictDeny) {
		t.Error("a deny's reason is not carried")
	}

	b, _ := json.Marshal(map[string]string{"reply": "reject", "message": "from the TUI"})
	res, err := http.Post(s.URL+"/permission/"+req.ID+"/reply", "application/json", bytes.NewReader(b))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("opencode's own reply: %v %v", res, err)
	}
	res.Body.Close()
	done, _ := changesUntil(t, src, cur, "the answer", func(r store.Request) bool {
		return r.ID == req.ID && r.Resolved && r.Decision != "answered in opencode"
	})
	if done.Decision != string(store.VerdictDeny) || done.DecidedBy != "opencode" || done.Reason != "from the TUI" {
		t.Errorf("answered in opencode: %+v", done)
	}
	got, err := src.Request(ctx, req.Key())
	if err != nil || !got.Resolved || got.DecidedBy != "opencode" {
		t.Errorf("the request after: %+v %v", got, err)
	}
	r, err := src.Decide(ctx, store.Decision{Key: req.Key(), Verdict: store.VerdictApprove})
	if err != nil || r.Won || r.Decision != string(store.VerdictDeny) || r.DecidedBy != "opencode" {
		t.Errorf("a decision after opencode's: %+v %v", r, err)
	}
}

// With no server at the address, browsing shows nothing waiting and a
// decision says in one line that none is running.
func TestNoOpencodeServer(t *testing.T) {
	t.Setenv(opencode.ServerEnv, "http://127.0.0.1:1")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	src, err := store.Open(fixtureDB(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	reqs, err := src.Requests(context.Background(), false)
	if err != nil || len(reqs) != 0 {
		t.Errorf("requests with no server: %+v %v", reqs, err)
	}
	_, err = src.Request(context.Background(), store.RequestKey{Kind: store.Approval, ID: "per_x"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no opencode server answers at http://127.0.0.1:1 (start `opencode serve`") {
		t.Errorf("no server: %v", err)
	}
	if opencode.ServerURL(func(string) string { return "" }) != "http://127.0.0.1:4096" {
		t.Error("the default is not opencode's")
	}
}

// opencode answers (its TUI) between vigil's listing and vigil's reply —
// forced here by a proxy in front of the real server that sends the TUI's
// reject just before it passes vigil's reply on: the server takes the id
// once (Permission.reply: a second reply is a 404 NotFoundError), so the
// claim's winner is told it lost to opencode, the claim records that, and
// a later decider is told the same without a reply being sent.
func TestRealOpencodeAnsweredBetweenListingAndReply(t *testing.T) {
	s, _ := askingServer(t)
	target, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var replies atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reply") {
			replies.Add(1)
			res, err := http.Post(s.URL+r.URL.Path, "application/json", strings.NewReader(`{"reply":"reject","message":"from the TUI"}`))
			if err != nil || res.StatusCode != http.StatusOK {
				t.Errorf("the TUI's reply: %v %v", res, err)
			} else {
				res.Body.Close()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	t.Setenv(opencode.ServerEnv, proxy.URL)
	ctx := context.Background()
	db := filepath.Join(s.Home, ".local", "share", "opencode", "opencode.db")
	var src store.Source
	var req store.Request
	for deadline := time.Now().Add(90 * time.Second); req.ID == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no request waited")
		}
		if src == nil {
			if src, err = store.Open(db, store.Options{}); err != nil {
				src = nil
				continue
			}
			t.Cleanup(func() { src.Close() })
		}
		if w, err := src.Requests(ctx, true); err == nil && len(w) == 1 {
			req = w[0]
		}
	}
	res, err := src.Decide(ctx, store.Decision{Key: req.Key(), Verdict: store.VerdictApprove})
	if err != nil || res.Won || res.DecidedBy != "opencode" ||
		res.Decision != string(store.VerdictDeny) && res.Decision != "answered in opencode" {
		t.Fatalf("vigil's decision, answered in opencode first: %+v %v", res, err)
	}
	res, err = src.Decide(ctx, store.Decision{Key: req.Key(), Verdict: store.VerdictDeny, Text: "late"})
	if err != nil || res.Won || res.DecidedBy != "opencode" {
		t.Errorf("a later decision: %+v %v", res, err)
	}
	if n := replies.Load(); n != 1 {
		t.Errorf("vigil sent %d replies; one, then none after the claim", n)
	}
}
