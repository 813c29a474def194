package serve

import (
	"testing"
	"time"
)

// A huge terminal, from the stock ssh client in a terminal of 5000×2000
// (script and stty) and then a window change to 8000×4000
// (golang.org/x/crypto/ssh), keeps the server's peak memory bounded: the
// session is drawn at maxCols×maxRows and says so.
func TestHugeTerminalIsClamped(t *testing.T) {
	sv := serveBinary(t)
	before := peakRSS(t, sv.pid)
	c := runStockSSH(t, sv, 5000, 2000)
	c.waitOut(t, "shared viewer view", 120*time.Second)
	c.waitOut(t, "drawn at 500×200 at most", 10*time.Second)
	afterPty := peakRSS(t, sv.pid)

	ts := &testServer{addr: "127.0.0.1:" + sv.port}
	// Its emulator is as large as the server draws: the frames after the
	// window change are drawn at maxCols×maxRows.
	tm := openTerm(t, ts, sv.viewer, maxCols, maxRows)
	tm.waitFor("Coordinate the v2.0 release", 30*time.Second)
	if err := tm.sess.WindowChange(4000, 8000); err != nil {
		t.Fatal(err)
	}
	tm.waitText("drawn at 500×200 at most", 60*time.Second)
	tm.typ("3") // an explorer of its own, at that size
	tm.waitText("vera@laptop (viewer) · drawn at 500×200 at most", 60*time.Second)
	if err := tm.sess.WindowChange(4000, 8000); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	after := peakRSS(t, sv.pid)
	t.Logf("server peak RSS: %d MB at start, %d MB after a 5000×2000 pty, %d MB after window changes to 8000×4000",
		before>>20, afterPty>>20, after>>20)
	if after > before+200<<20 {
		t.Fatalf("the server's peak RSS grew from %d MB to %d MB for one huge terminal", before>>20, after>>20)
	}
}
