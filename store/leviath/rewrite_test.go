package leviath

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// A journal written over in place (the same file, as long or longer,
// other bytes under what was read) is read again from its start and
// cursors get Reset, as for a replaced one: what is shown is the new
// journal, never old rows with new bytes folded after them. The same
// long-lived process (vigil agent) then answers a written cursor from
// before with Reset too, and what it serves after is the new journal.
func TestJournalWrittenOverInPlace(t *testing.T) {
	fx, s := openFx(t)
	cur := head(t, s)
	token, err := s.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	p := lvr(fx, idRoot)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("Splitting the release"))
	copy(b[i:], "SPLITTING THE RELEASE")
	fi, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond) // a later mtime
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g := fx.gens[idRoot]
	g.progress(t0+60, g.appendD("conversation", userE("after the rewrite")))
	if nfi, _ := os.Stat(p); inodeOf(nfi) != inodeOf(fi) {
		t.Fatal("not written over in place")
	}
	ch := changes(t, s, &cur)
	if !ch.Reset {
		t.Fatalf("Changes after the journal was written over: %+v; want Reset", ch)
	}
	fresh, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, want := rowsText(steps(t, s, idRoot)), rowsText(steps(t, fresh, idRoot))
	sameLines(t, "the timeline after the rewrite, and a fresh read of it", got, want)
	if !strings.Contains(strings.Join(got, "\n"), "1 assistant: SPLITTING THE RELEASE") {
		t.Fatalf("the rewrite is not read:\n%s", strings.Join(got, "\n"))
	}
	back, err := s.DecodeCursor(token)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := collect(t, s, back)
	if !r.Reset {
		t.Fatalf("a written cursor from before the rewrite: %+v; want Reset", r)
	}
}
