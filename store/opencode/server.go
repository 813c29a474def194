package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultServer is where `opencode serve` listens unless told otherwise:
// its --port 0 default takes 4096 first, on 127.0.0.1, and its SDK's
// default base URL is http://localhost:4096.
const DefaultServer = "http://127.0.0.1:4096"

// ServerEnv names the variable that points vigil at another opencode
// server.
const ServerEnv = "VIGIL_OPENCODE_URL"

// ServerURL is the opencode server vigil asks: $VIGIL_OPENCODE_URL, else
// DefaultServer.
func ServerURL(getenv func(string) string) string {
	if u := strings.TrimRight(strings.TrimSpace(getenv(ServerEnv)), "/"); u != "" {
		return u
	}
	return DefaultServer
}

// server is a running `opencode serve`: the one place opencode keeps its
// pending permission requests (in memory: packages/opencode/src/
// permission, Permission.ask and Permission.reply).
type server struct {
	url    string
	auth   string // "user:password" for basic auth, as opencode's own clients send it
	client *http.Client
	// downUntil (unix nanoseconds) holds browsing off a server that did not
	// answer: an address that drops packets would stall every refresh.
	downUntil atomic.Int64
	// events counts permission events seen on the server's event stream:
	// a change of it is a change of what waits (Watch's probe).
	events atomic.Uint64
}

func newServer(getenv func(string) string) *server {
	s := &server{url: ServerURL(getenv), client: &http.Client{Timeout: 5 * time.Second}}
	// The variables opencode's server and clients read
	// (OPENCODE_SERVER_PASSWORD, OPENCODE_SERVER_USERNAME or "opencode").
	if pw := getenv("OPENCODE_SERVER_PASSWORD"); pw != "" {
		user := getenv("OPENCODE_SERVER_USERNAME")
		if user == "" {
			user = "opencode"
		}
		s.auth = user + ":" + pw
	}
	return s
}

// errNoServer says no opencode server answers at the address.
type errNoServer struct {
	url string
	err error
}

func (e *errNoServer) Error() string {
	return fmt.Sprintf("no opencode server answers at %s (start `opencode serve`, or point %s at yours): %v", e.url, ServerEnv, e.err)
}

func (e *errNoServer) Unwrap() error { return e.err }

// permission is a pending request as opencode's server lists it
// (PermissionRequest in permission/index.ts).
type permission struct {
	ID         string         `json:"id"`
	SessionID  string         `json:"sessionID"`
	Permission string         `json:"permission"`
	Patterns   []string       `json:"patterns"`
	Metadata   map[string]any `json:"metadata"`
	Always     []string       `json:"always"`
	Tool       *struct {
		MessageID string `json:"messageID"`
		CallID    string `json:"callID"`
	} `json:"tool"`
	// Directory is the instance the request was listed in: a reply must
	// go to the same one (the server keeps one pending map per directory).
	// vigil's, not the server's: kept with the request it remembers.
	Directory string `json:"vigilDirectory,omitempty"`
}

func (s *server) do(ctx context.Context, method, path, dir string, body any) (*http.Response, error) {
	u := s.url + path
	if dir != "" {
		u += "?directory=" + url.QueryEscape(dir)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, &errNoServer{s.url, err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.auth != "" {
		user, pw, _ := strings.Cut(s.auth, ":")
		req.SetBasicAuth(user, pw)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, &errNoServer{s.url, err}
	}
	return res, nil
}

// pending lists the permission requests waiting in the server's instances
// for dirs ("" is the server's own directory), once each. No dirs: nothing
// can wait, and the server is not asked.
func (s *server) pending(ctx context.Context, dirs []string) ([]permission, error) {
	var out []permission
	seen := map[string]bool{}
	for _, dir := range dirs {
		res, err := s.do(ctx, http.MethodGet, "/permission", dir, nil)
		if err != nil {
			return nil, err
		}
		var got []permission
		err = decodeReply(res, &got)
		if err != nil {
			return nil, fmt.Errorf("opencode server %s: listing permissions: %w", s.url, err)
		}
		for _, p := range got {
			if p.ID == "" || seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			p.Directory = dir
			out = append(out, p)
		}
	}
	return out, nil
}

// browse is pending for a reader's refresh: after a failure the server is
// left alone for a few seconds (its event stream says when it is back).
// Decisions ask it every time.
func (s *server) browse(ctx context.Context, dirs []string) ([]permission, error) {
	if time.Now().UnixNano() < s.downUntil.Load() {
		return nil, &errNoServer{s.url, errors.New("it did not answer a moment ago")}
	}
	out, err := s.pending(ctx, dirs)
	if err != nil {
		s.downUntil.Store(time.Now().Add(5 * time.Second).UnixNano())
	}
	return out, err
}

// listening says whether anything takes a connection at the server's
// address (not while browse holds off it): when nothing does, no request
// can wait, and a reader need not find which sessions run to ask it.
func (s *server) listening(ctx context.Context) bool {
	if time.Now().UnixNano() < s.downUntil.Load() {
		return false
	}
	u, err := url.Parse(s.url)
	if err != nil || u.Host == "" {
		return true // do says what is wrong with it
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: s.client.Timeout}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		s.downUntil.Store(time.Now().Add(5 * time.Second).UnixNano())
		return false
	}
	c.Close()
	return true
}

// errAnswered is the server's 404 on a reply: the request is no longer
// pending (Permission.reply fails with NotFoundError when its id is not in
// the pending map: answered already, or its session was cancelled).
var errAnswered = errors.New("no longer pending in opencode")

// reply answers a pending request: "once" or "reject" (with message, which
// opencode hands the model as the rejection's feedback: CorrectedError).
func (s *server) reply(ctx context.Context, p permission, reply, message string) error {
	body := map[string]string{"reply": reply}
	if message != "" {
		body["message"] = message
	}
	res, err := s.do(ctx, http.MethodPost, "/permission/"+url.PathEscape(p.ID)+"/reply", p.Directory, body)
	if err != nil {
		return err
	}
	if res.StatusCode == http.StatusNotFound {
		res.Body.Close()
		return errAnswered
	}
	var ok bool
	if err := decodeReply(res, &ok); err != nil {
		return fmt.Errorf("opencode server %s: replying to %s: %w", s.url, p.ID, err)
	}
	return nil
}

func decodeReply(res *http.Response, v any) error {
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", res.Status, firstLine(string(b)))
	}
	return json.Unmarshal(b, v)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// follow reads the server's global event stream (/global/event: every
// instance's events, each a line `data: {"directory":…,"payload":{"type":
// "permission.asked",…}}`) until ctx ends, counting permission events, and
// connects again while the server is away. Nothing else is read from it:
// what waits is listed again (pending) when the count moves.
func (s *server) follow(ctx context.Context) {
	stream := &http.Client{} // no timeout: the stream stays open
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/global/event", nil)
		if err != nil {
			return
		}
		if s.auth != "" {
			user, pw, _ := strings.Cut(s.auth, ":")
			req.SetBasicAuth(user, pw)
		}
		if res, err := stream.Do(req); err == nil {
			if res.StatusCode == http.StatusOK {
				s.downUntil.Store(0)
				s.events.Add(1) // (re)connected: what waits may have changed meanwhile
				sc := bufio.NewScanner(res.Body)
				sc.Buffer(make([]byte, 64<<10), 8<<20)
				for sc.Scan() {
					if line := sc.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, `"type":"permission.`) {
						s.events.Add(1)
					}
				}
			}
			res.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}
