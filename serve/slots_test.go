package serve

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// idleConn is a TCP connection that reads the server's banner and then
// sends nothing, from the address local.
func idleConn(t *testing.T, ts *testServer, local string) (net.Conn, bool) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.SetReadDeadline(time.Time{})
	return c, err == nil && strings.HasPrefix(line, "SSH-2.0-")
}

// closedByServer waits for the server to close c.
func closedByServer(c net.Conn, within time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(within))
	_, err := c.Read(make([]byte, 1))
	ne, timeout := err.(net.Error)
	return err != nil && !(timeout && ne.Timeout())
}

// Connections that send nothing hold no slot an approver needs: one
// address may hold only so many before authenticating, and each only
// until the handshake deadline. Raw TCP connections stand for the idle
// ones, golang.org/x/crypto/ssh's client for the approver.
func TestIdleConnectionsHoldNoSlots(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxConns = 6
		c.RatePerMinute = 1000
		c.MaxUnauthPerAddr = 3
		c.HandshakeTimeout = 2 * time.Second
	})
	// From one address: three held, the rest refused at once.
	held := 0
	var conns []net.Conn
	for i := 0; i < 6; i++ {
		c, ok := idleConn(t, ts, "127.0.0.2")
		if ok {
			held++
			conns = append(conns, c)
		}
	}
	if held != 3 {
		t.Fatalf("one address holds %d connections that never authenticate, want 3", held)
	}
	waitLog(t, ts, "3 connections from 127.0.0.2 have not authenticated yet")
	c, err := dial(ts, ts.approve)
	if err != nil {
		t.Fatalf("an approver was refused while idle connections from another address were open: %v", err)
	}
	c.Close()

	// From three addresses: every slot held, and the approver still gets
	// in once the handshake deadline has closed them.
	for _, a := range []string{"127.0.0.3", "127.0.0.4"} {
		for i := 0; i < 3; i++ {
			if c, ok := idleConn(t, ts, a); ok {
				conns = append(conns, c)
			}
		}
	}
	start := time.Now()
	for _, c := range conns {
		if !closedByServer(c, 20*time.Second) {
			t.Fatalf("an idle connection was still open %s after it was opened", time.Since(start).Round(time.Second))
		}
	}
	waitLog(t, ts, "not authenticated within 2s (--handshake-timeout)")
	c, err = dial(ts, ts.approve)
	if err != nil {
		t.Fatalf("an approver was refused after the idle connections' deadline: %v", err)
	}
	c.Close()
}

// A session's request to forward the client's agent is refused: the
// server never uses one.
func TestAgentForwardingRefused(t *testing.T) {
	ts := startServer(t, nil)
	c, err := dial(ts, ts.viewer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ok, err := s.SendRequest(agentRequest, true, nil)
	if err != nil || ok {
		t.Fatalf("auth-agent-req@openssh.com: accepted %v (%v)", ok, err)
	}
	if err := s.RequestPty("xterm", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatalf("the session's next request: %v", err)
	}
}
