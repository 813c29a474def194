package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// connRecord is what a connection tried before it authenticated, so a
// refusal is one line that says all of it.
type connRecord struct {
	mu      sync.Mutex
	user    string
	client  string
	methods map[string]bool // refused methods other than publickey
	keys    []string        // fingerprints of refused keys
	authed  bool
	host    string
	counted bool // in Server.unauth until it authenticates or closes
}

const recordKey ctxKey = "vigil-conn"

// onConn admits a connection under the rate limit and the cap on open
// connections, and starts its record.
func (s *Server) onConn(ctx ssh.Context, c net.Conn) net.Conn {
	addr := c.RemoteAddr().String()
	host, _, _ := net.SplitHostPort(addr)
	if !s.limit.allow(host, time.Now()) {
		s.logf("refused %s: more than %d connections a minute from %s", addr, s.cfg.RatePerMinute, host)
		return nil
	}
	s.unauthMu.Lock()
	if s.unauth[host] >= s.cfg.MaxUnauthPerAddr {
		s.unauthMu.Unlock()
		s.logf("refused %s: %d connections from %s have not authenticated yet (the most one address may have)", addr, s.cfg.MaxUnauthPerAddr, host)
		return nil
	}
	if n := s.conns.Add(1); n > int64(s.cfg.MaxConns) {
		s.conns.Add(-1)
		s.unauthMu.Unlock()
		s.logf("refused %s: %d connections are open already (the most this server takes)", addr, s.cfg.MaxConns)
		return nil
	}
	s.unauth[host]++
	s.unauthMu.Unlock()
	rec := &connRecord{methods: map[string]bool{}, host: host, counted: true}
	s.pending.Store(addr, rec)
	ctx.SetValue(recordKey, rec)
	return c
}

func (s *Server) onClose(c net.Conn) {
	if v, ok := s.pending.LoadAndDelete(c.RemoteAddr().String()); ok {
		s.conns.Add(-1)
		rec := v.(*connRecord)
		rec.mu.Lock()
		s.authenticated(rec)
		rec.mu.Unlock()
	}
}

// authenticated takes a connection off its address's count of those not
// yet authenticated (once; rec.mu held).
func (s *Server) authenticated(rec *connRecord) {
	if !rec.counted {
		return
	}
	rec.counted = false
	s.unauthMu.Lock()
	if s.unauth[rec.host]--; s.unauth[rec.host] <= 0 {
		delete(s.unauth, rec.host)
	}
	s.unauthMu.Unlock()
}

// serverConfig notes every refused authentication attempt: publickey with
// a key in neither file, and password or keyboard-interactive, which this
// server never offers.
func (s *Server) serverConfig(ctx ssh.Context) *gossh.ServerConfig {
	rec, _ := ctx.Value(recordKey).(*connRecord)
	return &gossh.ServerConfig{
		AuthLogCallback: func(conn gossh.ConnMetadata, method string, err error) {
			if rec == nil {
				return
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.user, rec.client = conn.User(), string(conn.ClientVersion())
			switch {
			case err == nil:
				rec.authed = true
				s.authenticated(rec)
			case method == "none", method == "publickey":
				// none is every client's first question; a refused key is
				// noted by publicKey with its fingerprint.
			default:
				rec.methods[method] = true
			}
		},
	}
}

// publicKey accepts a key listed in --approvers or --authorized-keys.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	if _, _, ok := s.role(key, ctx.RemoteAddr()); ok {
		return true
	}
	if rec, _ := ctx.Value(recordKey).(*connRecord); rec != nil {
		rec.mu.Lock()
		fp := gossh.FingerprintSHA256(key)
		if len(rec.keys) == 0 || rec.keys[len(rec.keys)-1] != fp {
			rec.keys = append(rec.keys, fp)
		}
		rec.mu.Unlock()
	}
	return false
}

// onFailed logs one line for a connection that ended before a session:
// what it tried and why each was refused.
func (s *Server) onFailed(c net.Conn, err error) {
	addr := c.RemoteAddr().String()
	v, _ := s.pending.Load(addr)
	rec, _ := v.(*connRecord)
	if rec == nil {
		s.logf("connection %s failed: %v", addr, err)
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var why []string
	if len(rec.keys) > 0 {
		why = append(why, fmt.Sprintf("public key %s not in --authorized-keys or --approvers", strings.Join(rec.keys, ", ")))
	}
	var methods []string
	for m := range rec.methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		why = append(why, m+" authentication is not accepted (public keys only)")
	}
	who := ""
	if rec.user != "" {
		who = fmt.Sprintf(" (user %q, %s)", sanitize.Line(rec.user), sanitize.Line(rec.client))
	}
	var timeout net.Error
	switch {
	case errors.As(err, &timeout) && timeout.Timeout():
		s.logf("closed %s%s: not authenticated within %s (--handshake-timeout)", addr, who, s.cfg.HandshakeTimeout)
	case len(why) > 0:
		s.logf("refused %s%s: %s", addr, who, strings.Join(why, "; "))
	case errors.Is(err, io.EOF), strings.Contains(err.Error(), "no auth passed yet"):
		// A client offered no key, or only methods this server never
		// offers (it advertises publickey alone, so passwords are not
		// even asked for).
		s.logf("refused %s%s: no public key offered; this server accepts public keys only (no passwords, no keyboard-interactive)", addr, who)
	default:
		s.logf("refused %s%s: %v", addr, who, sanitize.Line(err.Error()))
	}
}

// rateLimit is a token bucket per address: perMinute connections a
// minute, as many at once.
type rateLimit struct {
	mu        sync.Mutex
	perMinute float64
	buckets   map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimit(perMinute int) *rateLimit {
	return &rateLimit{perMinute: float64(perMinute), buckets: map[string]*bucket{}}
}

func (r *rateLimit) allow(host string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[host]
	if !ok {
		if len(r.buckets) > 4096 {
			for h, old := range r.buckets { // forget the full ones
				if old.tokens+now.Sub(old.at).Minutes()*r.perMinute >= r.perMinute {
					delete(r.buckets, h)
				}
			}
		}
		b = &bucket{tokens: r.perMinute, at: now}
		r.buckets[host] = b
	}
	b.tokens = min(r.perMinute, b.tokens+now.Sub(b.at).Minutes()*r.perMinute)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
