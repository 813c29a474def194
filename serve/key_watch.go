package serve

import (
	"net"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
)

// keyCheckEvery is how often the key files are looked at between
// connections, so that a file that stops granting is said on every
// session's status bar without anyone connecting.
const keyCheckEvery = time.Second

func (s *Server) watchKeys(stop <-chan struct{}) {
	t := time.NewTicker(keyCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.viewers.state()
			s.approver.state()
		}
	}
}

// keysChanged logs a key file's new state and wakes every session, whose
// status bar says it (keyNote).
func (s *Server) keysChanged(trouble string, refused []string) {
	if trouble != "" {
		s.logf("key file: %s", trouble)
	}
	for _, r := range refused {
		s.logf("key file: refused %s", r)
	}
	for _, h := range s.hubs {
		h.Wake()
	}
}

// keyNote is what is wrong with the key files, for every status bar.
func (s *Server) keyNote() string {
	var t []string
	for _, k := range []*keyFile{s.approver, s.viewers} {
		if k == nil {
			continue
		}
		k.mu.Lock()
		if k.short != "" {
			t = append(t, k.short)
		}
		k.mu.Unlock()
	}
	return strings.Join(t, "; ")
}

// revokedFor is a session's check before each decision: its key must
// still be an approver's, from its address, in the file as it is now.
func (s *Server) revokedFor(who audit.Who, addr net.Addr) func() string {
	ip := ipOf(addr)
	return func() string {
		if _, ok := s.approver.lookup(who.Fingerprint, ip); ok {
			return ""
		}
		if t := s.approver.state(); t != "" {
			return t
		}
		return "your key no longer decides from " + ip.String() + " (--approvers)"
	}
}

func ipOf(addr net.Addr) net.IP {
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.IP
	}
	if addr == nil {
		return nil
	}
	host, _, _ := net.SplitHostPort(addr.String())
	return net.ParseIP(host)
}
