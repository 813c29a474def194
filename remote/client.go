package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/tailbuf"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Target is a parsed ssh://[user@]host[:port]/path.
type Target struct {
	User, Host, Port string
	Path             string // as the far side's vigil takes it: /abs, ~/rel or rel
}

// IsURL reports whether s names a remote store.
func IsURL(s string) bool { return strings.HasPrefix(s, "ssh://") }

// ParseTarget reads ssh://[user@]host[:port]/path. "ssh://h/~/runs.sqlite3"
// is runs.sqlite3 in the remote home, "ssh://h//srv/runs.sqlite3" and
// "ssh://h/srv/runs.sqlite3" are both /srv/runs.sqlite3.
func ParseTarget(s string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "ssh" {
		return Target{}, fmt.Errorf("%q is not ssh://[user@]host[:port]/path", sanitize.Line(s))
	}
	t := Target{Host: u.Hostname(), Port: u.Port()}
	if u.User != nil {
		t.User = u.User.Username()
		if _, has := u.User.Password(); has {
			return Target{}, errors.New("ssh:// with a password: vigil uses ssh's own authentication (keys, agent, config)")
		}
	}
	if t.Host == "" {
		return Target{}, fmt.Errorf("%q names no host", sanitize.Line(s))
	}
	p := u.Path
	switch {
	case strings.HasPrefix(p, "/~"):
		p = p[1:]
	case strings.HasPrefix(p, "//"):
		p = p[1:]
	}
	if p == "" || p == "/" {
		return Target{}, fmt.Errorf("%q names no store path on %s", sanitize.Line(s), t.Host)
	}
	t.Path = p
	return t, nil
}

// String is the target as a URL.
func (t Target) String() string {
	s := "ssh://"
	if t.User != "" {
		s += t.User + "@"
	}
	s += t.Host
	if t.Port != "" {
		s += ":" + t.Port
	}
	if !strings.HasPrefix(t.Path, "/") {
		return s + "/" + t.Path
	}
	return s + t.Path
}

// Options tune a client.
type Options struct {
	// SSH is the ssh command and its options (default "ssh"; $VIGIL_SSH).
	SSH []string
	// RemoteVigil is the vigil command on the far side (default "vigil";
	// $VIGIL_REMOTE_VIGIL).
	RemoteVigil string
	ReadOnly    bool
	// Backoff bounds the reconnect delays (default 1 s doubling to 30 s).
	BackoffMin, BackoffMax time.Duration
	// Log gets one line per link event (nil: none).
	Log func(string)
	// Audit is this machine's decision log, where what became of a
	// decision the link took with it is recorded once the link is back
	// (nil: nowhere); the decision itself is recorded by the decision
	// service that sent it (internal/decision). Who is the local user,
	// whom the far side's log names; Via names the command ("the
	// explorer", "vigil approve").
	Audit *audit.Log
	Who   audit.Who
	Via   string
}

// channel is how this machine's audit log names the link: the URL and
// the command.
func (c *Client) channel() string {
	if c.opt.Via == "" {
		return c.t.String()
	}
	return c.t.String() + " (" + c.opt.Via + ")"
}

// Client is the link to one remote store: it connects, reconnects with
// back-off when the link drops, and hands out sources.
type Client struct {
	t   Target
	opt Options

	mu      sync.Mutex
	conn    *conn // nil while offline
	hello   Hello
	offline string // why it is offline ("" online)
	since   time.Time
	subs    map[*sub]struct{}
	closed  bool
	retry   *time.Timer
	backoff time.Duration
	unknown map[string]store.Decision // decisions whose fate the link took with it
	stats   LinkStats
}

// Dial connects to the target; a first connection that fails is an error
// of one line (no vigil there, another protocol, no such store, ssh's own
// refusal).
func Dial(ctx context.Context, t Target, opt Options) (*Client, error) {
	if len(opt.SSH) == 0 {
		opt.SSH = []string{"ssh"}
	}
	if opt.RemoteVigil == "" {
		opt.RemoteVigil = "vigil"
	}
	if opt.BackoffMin <= 0 {
		opt.BackoffMin = time.Second
	}
	if opt.BackoffMax <= 0 {
		opt.BackoffMax = 30 * time.Second
	}
	c := &Client{t: t, opt: opt, subs: map[*sub]struct{}{}, unknown: map[string]store.Decision{}}
	cn, h, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.conn, c.hello = cn, h
	go c.watchConn(cn)
	return c, nil
}

// Target is what the client reads.
func (c *Client) Target() Target { return c.t }

// Hello is what the agent said when the link was last made.
func (c *Client) Hello() Hello {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hello
}

// Offline says why the store cannot be reached now ("" when it can).
func (c *Client) Offline() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offline
}

// Close ends the link for good.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cn := c.conn
	c.conn = nil
	if c.retry != nil {
		c.retry.Stop()
	}
	for s := range c.subs {
		s.closeLocked()
	}
	c.mu.Unlock()
	if cn != nil {
		cn.close()
	}
	return nil
}

func (c *Client) logf(format string, args ...any) {
	if c.opt.Log != nil {
		c.opt.Log(fmt.Sprintf(format, args...))
	}
}

// argv is the ssh command line: the remote command is one shell word per
// argument, quoted for the far side's shell.
func (c *Client) argv() []string {
	a := append([]string(nil), c.opt.SSH[1:]...)
	a = append(a, "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
	if c.t.Port != "" {
		a = append(a, "-p", c.t.Port)
	}
	if c.t.User != "" {
		a = append(a, "-l", c.t.User)
	}
	remote := []string{c.opt.RemoteVigil, "agent", "--stdio", "--store", c.t.Path}
	if c.opt.ReadOnly {
		remote = append(remote, "--read-only")
	}
	q := make([]string, len(remote))
	for i, r := range remote {
		q[i] = shellQuote(r)
	}
	// A leading ~/ is the remote home: left for the far shell to expand.
	if strings.HasPrefix(c.t.Path, "~/") {
		q[4] = "~/" + shellQuote(c.t.Path[2:])
	}
	return append(a, "--", c.t.Host, strings.Join(q, " "))
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '@' || r == '+' || r == '=' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// conn is one ssh process and its pending calls.
type conn struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	wmu     sync.Mutex
	mu      sync.Mutex
	next    int64
	pending map[int64]chan reply
	streams map[int64]bool // pending calls whose answer comes in pieces
	lost    bool           // set before dead is closed: the link was the client's when it died
	dead    chan struct{}
	err     error // why it died
	stderr  *tailbuf.Buffer
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
}

func (cn *conn) close() {
	cn.in.Close()
	if cn.cmd.Process != nil {
		cn.cmd.Process.Kill()
	}
	<-cn.dead
}

// errLinkDown is a call cut off by the link dropping.
var errLinkDown = errors.New("the link dropped")

func (c *Client) connect(ctx context.Context) (*conn, Hello, error) {
	cmd := exec.Command(c.opt.SSH[0], c.argv()...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, Hello{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, Hello{}, err
	}
	stderr := &tailbuf.Buffer{Max: 4096}
	cmd.Stderr = stderr
	// A far side that left a child holding ssh's output open does not
	// hold up the end of the link.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, Hello{}, fmt.Errorf("%s: cannot run %s: %v", c.t, c.opt.SSH[0], err)
	}
	cn := &conn{cmd: cmd, in: in, pending: map[int64]chan reply{}, streams: map[int64]bool{}, dead: make(chan struct{}), stderr: stderr}
	r := bufio.NewReaderSize(out, 64<<10)
	type first struct {
		line []byte
		err  error
	}
	got := make(chan first, 1)
	go func() {
		l, err := readLine(r)
		got <- first{l, err}
	}()
	var f first
	select {
	case f = <-got:
	case <-ctx.Done():
		stop(cmd, in)
		return nil, Hello{}, ctx.Err()
	case <-time.After(30 * time.Second):
		stop(cmd, in)
		return nil, Hello{}, fmt.Errorf("%s: no answer from the far side within 30 s", c.t)
	}
	if f.err != nil {
		in.Close()
		werr := cmd.Wait()
		return nil, Hello{}, c.startError(werr, stderr.String())
	}
	var hl helloLine
	if err := json.Unmarshal(f.line, &hl); err != nil || (hl.Hello == nil && hl.Error == "") {
		stop(cmd, in)
		return nil, Hello{}, fmt.Errorf("%s: the far side's %s did not answer as vigil agent (an old vigil, or something else by that name): %q",
			c.t, c.opt.RemoteVigil, sanitize.Line(string(bytes.TrimSpace(f.line))))
	}
	if hl.Error != "" {
		stop(cmd, in)
		return nil, Hello{}, fmt.Errorf("%s: %s", c.t, sanitize.Line(hl.Error))
	}
	lo := hl.Hello.MinProto
	if lo <= 0 || lo > hl.Hello.Proto {
		lo = hl.Hello.Proto
	}
	if hl.Hello.Proto < MinProto || lo > Proto {
		stop(cmd, in)
		return nil, Hello{}, fmt.Errorf("%s: the far side runs vigil %s, which speaks protocol %s; this vigil speaks %s: install the same vigil on both",
			c.t, sanitize.Line(hl.Hello.Vigil), protoRange(lo, hl.Hello.Proto), protoRange(MinProto, Proto))
	}
	// The link speaks the highest version both ends know.
	hl.Hello.Proto = min(hl.Hello.Proto, Proto)
	// The process is waited for from now on: its end (ssh killed, the
	// network gone) closes the pipe the read loop reads, even when a child
	// on the far side still holds the other end.
	cn.exited = make(chan struct{})
	go func() { cn.waitErr = cmd.Wait(); close(cn.exited) }()
	go c.readLoop(cn, r)
	return cn, *hl.Hello, nil
}

// protoRange is "2" or "1–2".
func protoRange(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(hi)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// stop ends an ssh process: its input closed, then killed.
func stop(cmd *exec.Cmd, in io.Closer) {
	in.Close()
	cmd.Process.Kill()
	cmd.Wait()
}

// startError is why the agent did not start, from ssh's exit and what it
// or the far shell said.
func (c *Client) startError(werr error, stderr string) error {
	code, how := 0, "" // a nil werr: the command exited 0
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		code = ee.ExitCode()
		if code < 0 {
			how = ee.String() // ended by a signal: "signal: killed"
		}
	case werr != nil:
		code, how = -1, werr.Error()
	}
	said := lastLine(stderr)
	switch {
	case code == 0:
		return fmt.Errorf("%s: the far side's %q exited 0 without answering: it is not vigil agent (set VIGIL_REMOTE_VIGIL to vigil's path there)",
			c.t, c.opt.RemoteVigil)
	case how != "":
		return fmt.Errorf("%s: the far side's vigil agent ended before answering (%s): %s", c.t, sanitize.Line(how), orText(said, "no message"))
	case code == 127:
		return fmt.Errorf("%s: vigil is not installed on %s (%q not found on the PATH of a non-interactive shell; set VIGIL_REMOTE_VIGIL to its path)",
			c.t, c.t.Host, c.opt.RemoteVigil)
	case code == 2 && strings.Contains(stderr, "agent"):
		return fmt.Errorf("%s: the vigil on %s has no agent command (an older vigil): install this one there", c.t, c.t.Host)
	case code == 255:
		return fmt.Errorf("%s: ssh failed: %s", c.t, orText(said, "exit 255"))
	}
	return fmt.Errorf("%s: the far side's vigil agent ended before answering (exit %d): %s", c.t, code, orText(said, "no message"))
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return sanitize.Line(strings.TrimSpace(lines[len(lines)-1]))
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if !isPrefix {
			return line, nil
		}
	}
}

func (c *Client) readLoop(cn *conn, r *bufio.Reader) {
	var err error
	for {
		var line []byte
		line, err = readLine(r)
		if err != nil {
			break
		}
		var rep reply
		if json.Unmarshal(line, &rep) != nil {
			continue
		}
		if rep.Notice != "" {
			kind := watch.Changed
			if rep.Notice == "gone" {
				kind = watch.Gone
			}
			c.broadcast(watch.Signal{Kind: kind, Mode: watch.Push, Reason: rep.Reason, At: time.Now()})
			continue
		}
		cn.mu.Lock()
		ch, ok := cn.pending[rep.ID]
		if rep.More && !cn.streams[rep.ID] {
			ok = false // a piece for a call that takes one answer: not its answer
		} else if !rep.More {
			delete(cn.pending, rep.ID)
			delete(cn.streams, rep.ID)
		}
		cn.mu.Unlock()
		if ok {
			ch <- rep
		}
	}
	cn.in.Close()
	cn.cmd.Process.Kill()
	<-cn.exited
	werr := cn.waitErr
	why := "the link dropped"
	if s := lastLine(cn.stderr.String()); s != "" {
		why += ": " + s
	} else if werr != nil {
		why += ": " + werr.Error()
	}
	cn.mu.Lock()
	cn.err = errors.New(why)
	cn.mu.Unlock()
	// Offline before any call cut off by the link returns: a caller told
	// its decision is unknown finds the store offline, never yet online.
	cn.lost = c.markLost(cn)
	cn.mu.Lock()
	for id, ch := range cn.pending {
		close(ch)
		delete(cn.pending, id)
		delete(cn.streams, id)
	}
	cn.mu.Unlock()
	close(cn.dead)
}

// markLost marks the store offline if cn is its link; it reports whether
// it was.
func (c *Client) markLost(cn *conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.conn != cn {
		return false
	}
	c.conn = nil
	c.offline, c.since = cn.err.Error(), time.Now()
	c.backoff = c.opt.BackoffMin
	return true
}

// watchConn says the store is offline when the link dies, and reconnects.
func (c *Client) watchConn(cn *conn) {
	<-cn.dead
	if !cn.lost {
		return
	}
	c.logf("%s: offline: %s", c.t, cn.err)
	c.broadcast(watch.Signal{Kind: watch.Changed, Mode: watch.Push, At: time.Now()})
	c.scheduleReconnect()
}

func (c *Client) scheduleReconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	d := c.backoff
	c.backoff = min(c.backoff*2, c.opt.BackoffMax)
	c.offline = fmt.Sprintf("%s (since %s); reconnecting in %s", strings.SplitN(c.offline, " (since", 2)[0],
		c.since.Format("15:04:05"), d.Round(time.Second/10))
	c.retry = time.AfterFunc(d, c.reconnect)
}

func (c *Client) reconnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cn, h, err := c.connect(ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if cn != nil {
			cn.close()
		}
		return
	}
	if err != nil {
		c.offline = err.Error()
		c.mu.Unlock()
		c.logf("%s: still offline: %v", c.t, err)
		c.scheduleReconnect()
		return
	}
	c.conn, c.hello, c.offline = cn, h, ""
	unknown := c.unknown
	c.unknown = map[string]store.Decision{}
	c.mu.Unlock()
	c.logf("%s: back online (agent %s)", c.t, h.Instance)
	go c.watchConn(cn)
	if len(unknown) > 0 {
		go c.reread(unknown)
	}
	// Every source's next refresh finds a cursor of the old agent: one
	// with a token resumes where it was, one without answers Reset and the
	// explorer loads the store again (Source.Changes).
	c.broadcast(watch.Signal{Kind: watch.Changed, Mode: watch.Push, At: time.Now()})
}

// reread reads again the requests whose decisions the link took with it,
// and says what the store holds (they are never sent again); the audit
// log gets what was read.
func (c *Client) reread(keys map[string]store.Decision) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reqs []store.Request
	if err := c.call(ctx, "Requests", requestsParams{}, &reqs); err != nil {
		for k, d := range keys {
			c.logf("%s: %s was in flight when the link dropped; reading it again failed: %v", c.t, k, err)
			c.auditReread(d, "reading it again failed: "+err.Error())
		}
		return
	}
	for k, d := range keys {
		held := "the store no longer lists it"
		for _, r := range reqs {
			if r.Key().String() != k {
				continue
			}
			switch {
			case r.Resolved:
				by := ""
				if r.DecidedBy != "" {
					by = " by " + sanitize.Line(r.DecidedBy)
				}
				held = fmt.Sprintf("the store holds %q%s", sanitize.Line(r.Decision), by)
			default:
				held = "it still waits, undecided"
			}
		}
		c.logf("%s: %s was in flight when the link dropped: %s (read again, not sent again)", c.t, k, held)
		c.auditReread(d, held)
	}
}

func (c *Client) auditReread(d store.Decision, held string) {
	if c.opt.Audit == nil {
		return
	}
	r := audit.Of(c.t.String(), d, "", c.opt.Who, c.channel(), store.DecideResult{}, nil, time.Now())
	r.Outcome, r.Held = audit.ReadAgain, held
	if err := c.opt.Audit.Append(r); err != nil {
		c.logf("%s: %v", c.t, err)
	}
}

// call sends one request and waits for its answer.
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	cn, id, ch, err := c.send(method, params, false)
	if err != nil {
		return err
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return errLinkDown
		}
		if rep.Error != nil {
			return fromWire(rep.Error)
		}
		if result != nil {
			return json.Unmarshal(rep.Result, result)
		}
		return nil
	case <-ctx.Done():
		cn.mu.Lock()
		delete(cn.pending, id)
		cn.mu.Unlock()
		return ctx.Err()
	}
}

// stream is a call whose answer comes in pieces (replies with More), each
// handed to piece in order. A stream given up (ctx done, piece failed) is
// drained in the background, so the link's reader never waits on it.
func (c *Client) stream(ctx context.Context, method string, params any, piece func(json.RawMessage) error) error {
	_, _, ch, err := c.send(method, params, true)
	if err != nil {
		return err
	}
	giveUp := func(err error) error {
		go func() {
			for rep := range ch {
				if !rep.More {
					return
				}
			}
		}()
		return err
	}
	for {
		select {
		case rep, ok := <-ch:
			if !ok {
				return errLinkDown
			}
			if rep.Error != nil {
				return fromWire(rep.Error)
			}
			if !rep.More {
				return nil
			}
			if err := piece(rep.Result); err != nil {
				return giveUp(err)
			}
		case <-ctx.Done():
			return giveUp(ctx.Err())
		}
	}
}

// send writes a call to the link and registers where its answer goes.
func (c *Client) send(method string, params any, streamed bool) (*conn, int64, chan reply, error) {
	c.mu.Lock()
	cn, off := c.conn, c.offline
	c.mu.Unlock()
	if cn == nil {
		return nil, 0, nil, &OfflineError{Target: c.t, Why: off}
	}
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, 0, nil, err
		}
		raw = b
	}
	ch := make(chan reply, 1)
	if streamed {
		ch = make(chan reply, 8)
	}
	cn.mu.Lock()
	if cn.err != nil {
		cn.mu.Unlock()
		return nil, 0, nil, &OfflineError{Target: c.t, Why: cn.err.Error()}
	}
	cn.next++
	id := cn.next
	cn.pending[id] = ch
	if streamed {
		cn.streams[id] = true
	}
	cn.mu.Unlock()
	b, _ := json.Marshal(request{ID: id, Method: method, Params: raw})
	b = append(b, '\n')
	cn.wmu.Lock()
	_, werr := cn.in.Write(b)
	cn.wmu.Unlock()
	if werr != nil {
		// The request may or may not have left: the caller treats it as
		// cut off (a decision is then unknown, never sent again).
		return nil, 0, nil, errLinkDown
	}
	return cn, id, ch, nil
}

// OfflineError is a call made while the link is down.
type OfflineError struct {
	Target Target
	Why    string
}

func (e *OfflineError) Error() string { return fmt.Sprintf("%s is offline: %s", e.Target.Host, e.Why) }

// sub is a source's wakeup: the agent's change notices and the link's
// comings and goings.
type sub struct {
	c      *Client
	ch     chan watch.Signal
	closed bool
}

func (c *Client) subscribe() *sub {
	s := &sub{c: c, ch: make(chan watch.Signal, 8)}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	return s
}

func (c *Client) broadcast(sig watch.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subs {
		if !s.closed {
			select {
			case s.ch <- sig:
			default:
			}
		}
	}
}

func (s *sub) C() <-chan watch.Signal { return s.ch }
func (s *sub) Ack(bool)               {}
func (s *sub) Mode() watch.Mode       { return watch.Push }
func (s *sub) Close() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	delete(s.c.subs, s)
	s.closeLocked()
	return nil
}

func (s *sub) closeLocked() {
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}
