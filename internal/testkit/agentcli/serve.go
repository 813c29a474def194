package agentcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Served is an agent CLI's own server running in a new HOME, set up as
// Start sets up a run: opencode's `opencode serve`, which asks its
// permissions over HTTP instead of in a terminal.
type Served struct {
	*Running
	URL string // http://127.0.0.1:PORT
}

// Serve starts the CLI's server on a free loopback port, pointed at the
// model server at baseURL, and returns once it answers (at most timeout
// for the whole of its life). Only opencode has one.
func (a *Agent) Serve(t testing.TB, baseURL string, timeout time.Duration) *Served {
	t.Helper()
	if a.Name != "opencode" {
		t.Fatalf("agentcli: %s has no server mode", a.Name)
	}
	port := freePort(t)
	r := a.start(t, baseURL, "", timeout, []string{"serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port)})
	s := &Served{Running: r, URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(120 * time.Second)
	for {
		res, err := client.Get(s.URL + "/global/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if r.Exited() || time.Now().After(deadline) {
			t.Fatalf("opencode serve did not answer on %s: %v\n%s", s.URL, err, tail(r.stderr.Bytes()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Prompt starts a session in the server and sends it text without
// waiting for the reply (POST /session, then /session/{id}/prompt_async),
// and returns the session's id.
func (s *Served) Prompt(t testing.TB, text string) string {
	t.Helper()
	var sess struct{ ID string }
	s.post(t, "/session", map[string]any{}, &sess)
	if sess.ID == "" {
		t.Fatal("opencode serve made no session")
	}
	s.post(t, "/session/"+sess.ID+"/prompt_async", map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}}, nil)
	return sess.ID
}

func (s *Served) post(t testing.TB, path string, body, into any) {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := http.Post(s.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 || into != nil && json.Unmarshal(out, into) != nil {
		t.Fatalf("POST %s: %s %s", path, res.Status, out)
	}
}

// OpencodePermissions is a Prepare that sets opencode's permission rules
// (tool → "ask", "allow" or "deny") in the config Start writes.
func OpencodePermissions(rules map[string]any) func(home, work string) error {
	return func(home, work string) error {
		p := filepath.Join(home, ".config", "opencode", "opencode.json")
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		c["permission"] = rules
		if b, err = json.Marshal(c); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o600)
	}
}
