package serve

import (
	"strings"
	"testing"
	"time"
)

// Reads of plain text long enough to be a paste become one bracketed
// paste; keys, escapes, a terminal's own bracketed paste and a character
// cut between reads are kept whole.
func TestPasterMakesReadsOfTextOnePaste(t *testing.T) {
	wrap := func(s string) string { return "\x1b[200~" + s + "\x1b[201~" }
	var p paster
	for _, c := range []struct{ in, want string }{
		{"j", "j"},
		{"abc", "abc"},
		{"a pasted line of text\r\nand another", wrap("a pasted line of text\r\nand another")},
		{"\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A", "\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A"},
		{"\x1b[<35;10;5M\x1b[<35;11;5M", "\x1b[<35;10;5M\x1b[<35;11;5M"},
		{"text with a bell \a in it", "text with a bell \a in it"},
	} {
		if got := string(p.chunk([]byte(c.in), true)); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	// The terminal's own paste, read in three pieces, its start marker cut.
	var q paster
	for _, in := range []string{"\x1b[20", "0~inside the terminal's paste", "more of it, long enough\x1b[201~"} {
		if got := string(q.chunk([]byte(in), true)); got != in {
			t.Errorf("inside a bracketed paste %q became %q", in, got)
		}
	}
	if got := string(q.chunk([]byte("after it, a paste of ours"), true)); got != wrap("after it, a paste of ours") {
		t.Errorf("after the terminal's paste: %q", got)
	}
	// With no field taking text, keys typed in a burst stay keys.
	var k paster
	if got := string(k.chunk([]byte("1/zzz-no-such-run"), false)); got != "1/zzz-no-such-run" {
		t.Errorf("keys typed in a burst, no field open: %q", got)
	}
	// A character cut between two reads of a paste.
	var r paster
	s := "a paste of ünïcödé text, read in two pieces"
	b := []byte(s)
	cut := strings.Index(s, "é") + 1
	first, second := string(r.chunk(b[:cut], true)), string(r.chunk(b[cut:], true))
	if first != wrap("a paste of ünïcöd") || second != wrap("é text, read in two pieces") {
		t.Errorf("cut character: %q then %q", first, second)
	}
}

// A paste into a field costs the server a few milliseconds of CPU a
// kilobyte, not one frame a byte, and a field it fills says so: the built binary, a golang.org/x/crypto/ssh
// client whose terminal does no bracketed paste (text written as it
// comes), the server's CPU read from /proc.
func TestPasteCostsNoFrameAByte(t *testing.T) {
	sv := serveBinary(t)
	ts := &testServer{addr: "127.0.0.1:" + sv.port}
	tm := openTerm(t, ts, sv.viewer, 120, 40)
	tm.waitFor("Coordinate the v2.0 release", 30*time.Second)
	tm.typ("/")
	tm.waitFor("vera@laptop (viewer)", 30*time.Second)
	waitCPUQuiet(t, sv.pid)
	const kb = 16
	text := strings.Repeat("pasted words zq ", 64) // 1 KB
	before := cpuTime(t, sv.pid)
	start := time.Now()
	for i := 0; i < kb; i++ {
		tm.typ(text)
	}
	tm.waitFor("no run matches the filter", 120*time.Second)
	waitCPUQuiet(t, sv.pid)
	// The filter takes 4 096 characters, and says it is full.
	tm.waitFor("full: 4,096 characters at most", 10*time.Second)
	used := cpuTime(t, sv.pid) - before
	t.Logf("%d KB pasted: %s of server CPU (%s a KB) over %s", kb, used, used/kb, time.Since(start).Round(time.Millisecond))
	if used/kb > 20*time.Millisecond {
		t.Fatalf("a pasted KB cost the server %s of CPU", used/kb)
	}
}

// waitCPUQuiet waits until the server has used no CPU for a second.
func waitCPUQuiet(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(300 * time.Second)
	last := cpuTime(t, pid)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		now := cpuTime(t, pid)
		if now-last <= 20*time.Millisecond {
			return
		}
		last = now
	}
	t.Fatal("the server did not go quiet within 300 s")
}

// Keys that come faster than frames (text pasted where no field takes
// it, a key held down) stay keys, drawn a frame at most every frameEvery
// rather than a frame a key: the built binary, an x/crypto client sending
// 4 KB of j and k to the timeline.
func TestKeyBurstCostsNoFrameAKey(t *testing.T) {
	sv := serveBinary(t)
	ts := &testServer{addr: "127.0.0.1:" + sv.port}
	tm := openTerm(t, ts, sv.viewer, 120, 40)
	tm.waitFor("Coordinate the v2.0 release", 30*time.Second)
	tm.typ("3")
	tm.waitFor("vera@laptop (viewer)", 30*time.Second)
	waitCPUQuiet(t, sv.pid)
	const kb = 4
	before := cpuTime(t, sv.pid)
	for i := 0; i < kb; i++ {
		tm.typ(strings.Repeat("jk", 512))
	}
	waitCPUQuiet(t, sv.pid)
	used := cpuTime(t, sv.pid) - before
	t.Logf("%d KB of keys into no field: %s of server CPU (%s a KB)", kb, used, used/kb)
	if used/kb > 60*time.Millisecond {
		t.Fatalf("a KB of keys cost the server %s of CPU", used/kb)
	}
}
