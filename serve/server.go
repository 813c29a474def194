package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	charmlog "charm.land/log/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	wishtea "charm.land/wish/v2/bubbletea"
	"github.com/charmbracelet/colorprofile"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

// Config is what vigil serve is started with.
type Config struct {
	Listen         string   // host:port (default 127.0.0.1:2222)
	AuthorizedKeys string   // authorized_keys file of viewers
	Approvers      string   // authorized_keys file of approvers
	HostKey        string   // default: StateDir/ssh_host_ed25519_key, generated on first start
	Stores         []string // one or more stores
	ReadOnly       bool     // nobody decides
	StateDir       string   // $XDG_STATE_HOME/vigil: the host key and the audit log
	// IdleTimeout closes a session nobody has pressed a key in for this
	// long (default 30 minutes; negative: never).
	IdleTimeout time.Duration
	// RatePerMinute is how many connections one address may open a minute
	// (default 60), MaxConns how many may be open at once (default 256).
	RatePerMinute, MaxConns int
	// HandshakeTimeout is how long a connection has to authenticate
	// (default 60 s), MaxUnauthPerAddr how many connections one address may
	// have open that have not yet (default 10): a connection that sends
	// nothing holds a slot of MaxConns that long at most, and one address
	// holds that many at most.
	HandshakeTimeout time.Duration
	MaxUnauthPerAddr int
	Poll             time.Duration
	// Look is the theme and keys of the server's config file: every
	// session's explorer is drawn and driven by them (what a connecting
	// user's own config says is on their machine, out of reach).
	Look tui.Look
	// Notify is the server's config's bell, desktop-notification and
	// title switches. With DetectDesktop (the config's protocol "auto")
	// a session's own explorer picks the desktop sequence from the
	// environment its client sent (TERM, and TERM_PROGRAM and the like
	// where the client sends them); else Notify.Desktop is used as it is.
	Notify        tui.Notify
	DetectDesktop bool
	// Open opens a store (cli's store.Open with the registered formats).
	Open func(path string, readOnly bool) (store.Source, error)
	Log  io.Writer // one line per event
}

// Server is a running vigil serve.
type Server struct {
	cfg      Config
	viewers  *keyFile
	approver *keyFile
	hubs     []*Hub
	names    []string // each store's name for `ssh host NAME`
	audit    *audit.Log
	srv      *ssh.Server
	hostFP   string
	limit    *rateLimit
	mirrors  mirrors
	conns    atomic.Int64

	logMu   sync.Mutex
	pending sync.Map // remote address → *connRecord, until it closes

	unauthMu sync.Mutex
	unauth   map[string]int // host → its connections not yet authenticated
}

// frameEvery is the shortest time between two frames of one session (see
// paced): at most 33 a second. It is shorter than the 50 ms between the
// commits of a store committing 20 times a second on purpose: a frame may
// come no sooner than frameEvery after the one before, so with the two
// equal, a frame drawn late made the next one late too, and the lag only
// grew (measured: it climbed a few milliseconds a commit until two commits
// fell into one frame). With room between them a late frame is caught up
// at the next commit, and a commit still costs a session one frame.
// frameSettle is how long a frame waits after the first message that makes
// it stale, for the reads that message starts to land in it. A commit is on
// screen within frameSettle+frameEvery plus the drawing.
const (
	frameEvery  = 30 * time.Millisecond
	frameSettle = 10 * time.Millisecond
)

const (
	defaultIdle  = 30 * time.Minute
	defaultRate  = 60
	defaultConns = 256
	// OpenSSH's LoginGraceTime is 120 s, with passwords to type; a key's
	// passphrase or an agent's confirmation may be asked for while a client
	// authenticates here: a minute is room for that.
	defaultHandshake = time.Minute
	// As OpenSSH's MaxStartups begins refusing at 10 unauthenticated
	// connections (server-wide there; here one address's).
	defaultUnauthPerAddr = 10
)

// New checks the configuration, opens every store and the audit log, and
// prepares the SSH server; Serve starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:2222"
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = defaultIdle
	}
	if cfg.RatePerMinute <= 0 {
		cfg.RatePerMinute = defaultRate
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultConns
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = defaultHandshake
	}
	if cfg.MaxUnauthPerAddr <= 0 {
		cfg.MaxUnauthPerAddr = defaultUnauthPerAddr
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if len(cfg.Stores) == 0 {
		return nil, errors.New("no store to serve: name one with --store")
	}
	if cfg.AuthorizedKeys == "" && cfg.Approvers == "" {
		return nil, errors.New("nobody may connect: give --authorized-keys (viewers) or --approvers (deciders), OpenSSH authorized_keys files")
	}
	s := &Server{cfg: cfg, limit: newRateLimit(cfg.RatePerMinute), unauth: map[string]int{}}
	// wish's own log says a program ended when its client left: this log
	// has a line per session already.
	charmlog.SetOutput(io.Discard)
	var err error
	if cfg.AuthorizedKeys != "" {
		if s.viewers, err = loadKeyFile(cfg.AuthorizedKeys, "--authorized-keys", s.keysChanged); err != nil {
			return nil, err
		}
	}
	if cfg.Approvers != "" {
		if s.approver, err = loadKeyFile(cfg.Approvers, "--approvers", s.keysChanged); err != nil {
			return nil, err
		}
	}
	hostPath := cfg.HostKey
	if hostPath == "" {
		hostPath = filepath.Join(cfg.StateDir, HostKeyName)
	}
	signer, pemBytes, created, err := loadHostKey(hostPath)
	if err != nil {
		return nil, err
	}
	s.hostFP = gossh.FingerprintSHA256(signer.PublicKey())
	if created {
		s.logf("generated host key %s (%s)", hostPath, s.hostFP)
	}
	if !cfg.ReadOnly {
		if s.audit, err = audit.Open(filepath.Join(cfg.StateDir, audit.FileName)); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Stores {
		path, ro := p, cfg.ReadOnly
		h, err := NewHub(func() (store.Source, error) { return cfg.Open(path, ro) }, HubOptions{Poll: cfg.Poll, Audit: s.audit})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.hubs = append(s.hubs, h)
		s.names = append(s.names, filepath.Base(path))
	}
	s.srv, err = wish.NewServer(
		wish.WithAddress(cfg.Listen),
		wish.WithHostKeyPEM(pemBytes),
		wish.WithVersion("vigil"),
		wish.WithPublicKeyAuth(s.publicKey),
		wish.WithMiddleware(s.gate),
	)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.srv.HandshakeTimeout = cfg.HandshakeTimeout
	if cfg.IdleTimeout > 0 {
		// A connection that moves no byte either way (one that
		// authenticated and opened no session, or whose client vanished)
		// is closed; a session's own idle close, which says why on its
		// terminal, comes first.
		s.srv.IdleTimeout = cfg.IdleTimeout + time.Minute
	}
	s.srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": refuseAgent(ssh.DefaultSessionHandler)}
	s.srv.ConnCallback = s.onConn
	s.srv.ServerConfigCallback = s.serverConfig
	s.srv.ConnectionFailedCallback = s.onFailed
	s.srv.ConnectionCloseCallback = s.onClose
	return s, nil
}

// HostFingerprint is the host key's SHA256 fingerprint.
func (s *Server) HostFingerprint() string { return s.hostFP }

// AuditPath is where decisions are logged ("" when read-only).
func (s *Server) AuditPath() string {
	if s.audit == nil {
		return ""
	}
	return s.audit.Path()
}

// Hubs are the shared tails, one per store.
func (s *Server) Hubs() []*Hub { return s.hubs }

// Serve accepts connections on l until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.logf("listening on %s (host key %s); %d viewer and %d approver keys; %s; stores: %s",
		l.Addr(), s.hostFP, s.viewers.count(), s.approver.count(), s.mode(), strings.Join(s.cfg.Stores, ", "))
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(l) }()
	stopKeys := make(chan struct{})
	defer close(stopKeys)
	go s.watchKeys(stopKeys)
	select {
	case err := <-errc:
		if errors.Is(err, ssh.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		s.srv.Close()
		<-errc
		return nil
	}
}

func (s *Server) mode() string {
	if s.cfg.ReadOnly {
		return "read-only"
	}
	return "decisions logged to " + s.audit.Path()
}

// Close stops the tails and closes the stores and the audit log.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
	for _, h := range s.hubs {
		h.Close()
	}
	if s.audit != nil {
		s.audit.Close()
	}
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "%s vigil serve: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// role says who a key is and what it may do from the client's address.
func (s *Server) role(key gossh.PublicKey, addr net.Addr) (audit.Who, Role, bool) {
	if key == nil {
		return audit.Who{}, Viewer, false
	}
	fp, ip := gossh.FingerprintSHA256(key), ipOf(addr)
	if who, ok := s.approver.lookup(fp, ip); ok {
		return who, Approver, true
	}
	if who, ok := s.viewers.lookup(fp, ip); ok {
		return who, Viewer, true
	}
	return audit.Who{}, Viewer, false
}

// session is one SSH session's explorer, as the gate admitted it.
type session struct {
	hub   *Hub
	index int    // which store
	label string // the store, in the status bar
	who   string // the key's name and role, in the status bar
	sess  Session
	model *tui.Model
	input *idleReader
	prog  *tea.Program
	own   atomic.Pointer[paced] // its own explorer, once it has one
}

type ctxKey string

// gate lets through a session with a known key, a terminal and a store,
// and logs it; anything else is refused with one line here and one there.
func (s *Server) gate(ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		addr := sess.RemoteAddr().String()
		who, role, ok := s.role(sess.PublicKey(), sess.RemoteAddr())
		if !ok {
			s.logf("refused %s: key %s is no longer in the key files", addr, fingerprint(sess.PublicKey()))
			wish.Fatalln(sess, "vigil serve: your key is no longer authorized")
			return
		}
		if _, _, pty := sess.Pty(); !pty {
			s.logf("refused %s (%s): no terminal requested (ssh -T or a command without -t)", addr, who.Name)
			wish.Fatalln(sess, "vigil serve: the explorer needs a terminal: connect with ssh -t")
			return
		}
		i, err := s.pick(sess.Command())
		if err != nil {
			s.logf("refused %s (%s): %v", addr, who.Name, err)
			wish.Fatalln(sess, "vigil serve: "+err.Error())
			return
		}
		se := &session{hub: s.hubs[i], index: i, sess: Session{Who: who, Role: role, Channel: "ssh " + addr + " (vigil serve)",
			Revoked: s.revokedFor(who, sess.RemoteAddr()), KeyNote: s.keyNote}}
		se.label, se.who = s.cfg.Stores[i], fmt.Sprintf("%s (%s)", who.Name, role)
		if s.cfg.ReadOnly {
			se.who += " · read-only"
		}
		if len(s.hubs) > 1 {
			se.label += fmt.Sprintf(" · store %d of %d", i+1, len(s.hubs))
		}
		start := time.Now()
		s.logf("session %s: %s (%s, %s) opened %s", addr, who.Name, who.Fingerprint, role, s.cfg.Stores[i])
		s.runSession(sess, se)
		if se.model != nil {
			se.model.Close()
		}
		s.logf("session %s: %s closed after %s", addr, who.Name, time.Since(start).Round(time.Second))
	}
}

// pick is the store a session asked for: `ssh host NAME` (a store's base
// name or its number), else the first.
func (s *Server) pick(cmd []string) (int, error) {
	if len(cmd) == 0 {
		return 0, nil
	}
	if len(cmd) > 1 {
		return 0, fmt.Errorf("one store name at most, not %q", sanitize.Line(strings.Join(cmd, " ")))
	}
	for i, n := range s.names {
		if cmd[0] == n || cmd[0] == s.cfg.Stores[i] || cmd[0] == strconv.Itoa(i+1) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no store %q here; these are served: %s", sanitize.Line(cmd[0]), strings.Join(s.names, ", "))
}

func (s *Server) readOnlyWhy() string {
	if s.cfg.ReadOnly {
		return "the server is read-only (vigil serve --read-only)"
	}
	return ""
}

// runSession shows the explorer on a session until it ends: the shared
// one of its mirror while it has pressed no key, then its own.
func (s *Server) runSession(sess ssh.Session, se *session) {
	pty, winCh, _ := sess.Pty()
	noColor := false
	for _, e := range sess.Environ() {
		noColor = noColor || strings.HasPrefix(e, "NO_COLOR=") && e != "NO_COLOR="
	}
	se.input = &idleReader{}
	se.input.touch()
	ctx := sess.Context()

	// The session's input, read once, whoever it is for.
	in := make(chan []byte, 16)
	go func() {
		defer close(in)
		buf := make([]byte, 4096)
		var paste paster
		for {
			n, err := sess.Read(buf)
			if n > 0 {
				// A key counts when it comes, not when the explorer takes
				// it (a session still loading takes it late); a terminal's
				// answer to a query is no key.
				if !isReply(buf[:n]) {
					se.input.touch()
				}
				own := se.own.Load()
				select {
				case in <- paste.chunk(append([]byte(nil), buf[:n]...), own != nil && own.takesText.Load()):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	idle := time.NewTicker(s.idleEvery())
	defer idle.Stop()

	// Watching: seated at the mirror for its store, role and terminal.
	w, h, clamped := clampSize(pty.Window.Width, pty.Window.Height)
	shared := fmt.Sprintf("shared %s view: any key for your own", se.sess.Role)
	key := mirrorKey{hub: se.hub, w: w, h: h, term: pty.Term, noColor: noColor, role: se.sess.Role, clamped: clamped}
	if clamped {
		s.logf("session %s: %s's terminal of %d×%d is drawn at %d×%d", sess.RemoteAddr(), se.sess.Who.Name, pty.Window.Width, pty.Window.Height, w, h)
	}
	m, seat := s.join(key, sess, wishtea.MakeOptions(sess), se.label, shared)
	var first []byte
watching:
	for {
		select {
		case <-ctx.Done():
			s.leave(m, seat)
			return
		case win := <-winCh:
			s.leave(m, seat)
			key.w, key.h, key.clamped = clampSize(win.Width, win.Height)
			m, seat = s.join(key, sess, wishtea.MakeOptions(sess), se.label, shared)
		case b, ok := <-in:
			if !ok {
				s.leave(m, seat)
				return
			}
			if isReply(b) {
				continue
			}
			first = b
			s.leave(m, seat)
			break watching
		case <-idle.C:
			// Off the mirror first, so no frame follows the reset.
			if s.idleOut(sess, se, func() io.Writer { s.leave(m, seat); io.WriteString(sess, terminalReset); return sess }) {
				return
			}
		}
	}

	// Its own explorer from the first key on; the key waits for it to
	// have loaded the store (it acts on what is shown).
	ro := s.readOnlyWhy()
	if key.clamped {
		se.who = whoClamped(se.who, true)
	}
	profile := colorprofile.Env(append(sess.Environ(), "TERM="+pty.Term))
	se.model = tui.New(tui.Options{
		Colors:     profile,
		Source:     se.hub.View(se.sess, ro),
		Reopen:     func() (store.Source, error) { return se.hub.View(se.sess, ro), nil },
		Wakeups:    se.hub.Wakeups,
		Poll:       s.cfg.Poll,
		StoreLabel: se.label,
		Who:        se.who,
		NoColor:    noColor,
		Look:       s.cfg.Look,
		Notify:     s.notifyFor(append(sess.Environ(), "TERM="+pty.Term)),
		// Its decisions: the key's name, the session's address, the
		// server's log (none when read-only: nothing is decided then).
		Decisions: &decision.Maker{Who: se.sess.Who, Via: se.sess.Channel, Log: s.audit},
	})
	own := newPaced(se.model, frameEvery, frameSettle)
	se.own.Store(own)
	own.screen = newLineScreen(sess, key.w, key.h)
	defer own.screen.close()
	opts := append(wishtea.MakeOptions(sess), tea.WithInput(se.input), tea.WithContext(ctx), tea.WithWindowSize(key.w, key.h),
		tea.WithOutput(own.screen.out), tea.WithoutRenderer(),
		// Without its renderer the program's ticker only sends its own
		// writes (a bell, a query): 20 a second is soon enough for those,
		// and fifty sessions' tickers wake the server less.
		tea.WithFPS(20))
	if libraryRenderer {
		own.screen = nil
		out := &tappedWriter{w: sess}
		if frameTap != nil {
			defer frameTap.ended(out)
		}
		opts = append(wishtea.MakeOptions(sess), tea.WithInput(se.input), tea.WithContext(ctx), tea.WithWindowSize(key.w, key.h),
			tea.WithOutput(out))
	}
	se.input.r = &chanReader{first: first, ch: in, ready: own.ready}
	se.prog = tea.NewProgram(own, opts...)
	stop := make(chan struct{})
	// The handler's return closes the session: it waits for this
	// goroutine, so that an idle close's last line, written after the
	// explorer was told to quit, is out before the channel closes (under
	// load the explorer ended first and the line was lost).
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for {
			select {
			case <-ctx.Done():
				se.prog.Quit()
				return
			case <-stop:
				return
			case win := <-winCh:
				w, h, _ := clampSize(win.Width, win.Height)
				se.prog.Send(tea.WindowSizeMsg{Width: w, Height: h})
			case <-idle.C:
				if s.idleOut(sess, se, func() io.Writer { own.screen.close(); return own.screen.writer(sess) }) {
					return
				}
			}
		}
	}()
	se.prog.Run()
	se.prog.Kill()
	close(stop)
	<-watching
}

func (s *Server) idleEvery() time.Duration {
	if s.cfg.IdleTimeout <= 0 {
		return time.Hour
	}
	return max(min(s.cfg.IdleTimeout/4, 10*time.Second), 10*time.Millisecond)
}

// idleOut ends a session nobody has typed in for the idle timeout.
// giveBack puts the terminal back as the session found it and returns
// where the last line goes: the stream the reset went out on, since a
// client copies the session's output and its error stream apart, and a
// line written before the reset would be lost with the alternate screen.
func (s *Server) idleOut(sess ssh.Session, se *session, giveBack func() io.Writer) bool {
	if s.cfg.IdleTimeout <= 0 {
		return false
	}
	idle := se.input.idle()
	if idle < s.cfg.IdleTimeout {
		return false
	}
	s.logf("session %s: %s closed: idle for %s", sess.RemoteAddr(), se.sess.Who.Name, idle.Round(time.Second))
	// A client that does not read (its SSH window full) would hold the
	// explorer in a frame's write, and this in the last line's: each is
	// given lastWords, then the session is closed all the same.
	within := func(f func()) {
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(lastWords):
		}
	}
	if se.prog != nil {
		within(se.prog.Quit)
	}
	within(func() {
		fmt.Fprintf(giveBack(), "\r\nvigil serve: closed after %s without a key pressed\r\n", s.cfg.IdleTimeout)
	})
	sess.Exit(0)
	sess.Close()
	return true
}

// lastWords is how long an idle close waits for the explorer to stop and
// its last line to go out.
const lastWords = 5 * time.Second

// chanReader reads the session's input after the key that was read first.
type chanReader struct {
	first []byte
	ch    <-chan []byte
	ready <-chan struct{}
}

func (r *chanReader) Read(p []byte) (int, error) {
	if r.ready != nil {
		select {
		case <-r.ready:
		case <-time.After(10 * time.Second): // a store that will not load: keys act on what there is
		}
		r.ready = nil
	}
	if len(r.first) == 0 {
		b, ok := <-r.ch
		if !ok {
			return 0, io.EOF
		}
		r.first = b
	}
	n := copy(p, r.first)
	r.first = r.first[n:]
	return n, nil
}

// idleReader is the session's input, with when a key last came from the
// client (noted as it arrives, see the session's reader).
type idleReader struct {
	r    io.Reader
	last atomic.Int64
}

func (r *idleReader) Read(p []byte) (int, error) { return r.r.Read(p) }

func (r *idleReader) touch() { r.last.Store(time.Now().UnixNano()) }

func (r *idleReader) idle() time.Duration { return time.Since(time.Unix(0, r.last.Load())) }

func fingerprint(k gossh.PublicKey) string {
	if k == nil {
		return "(none)"
	}
	return gossh.FingerprintSHA256(k)
}

// notifyFor is the server's notify settings for a session whose client sent
// env: the desktop sequence its terminal takes, when the config leaves it
// to be detected. A session's environment is never a tmux the server can
// ask, so a tmux on the client's side gets the bell alone.
func (s *Server) notifyFor(env []string) tui.Notify {
	n := s.cfg.Notify
	if s.cfg.DetectDesktop {
		getenv := func(k string) string {
			v := ""
			for _, e := range env {
				if name, val, ok := strings.Cut(e, "="); ok && name == k {
					v = val // the last one wins, as in a process's environment
				}
			}
			return v
		}
		n.Desktop, n.Tmux = tui.DetectDesktop(getenv, false)
	}
	return n
}
