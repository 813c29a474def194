package opencode_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// turn is one more finished model call of the fixture's root session,
// answering its first prompt, at ms after the run's start.
func turn(k int) string {
	t := 1796409700000 + int64(k)*100
	return fmt.Sprintf(`INSERT INTO message VALUES ('msg_n%[1]d', '%[2]s', %[3]d, %[3]d,
  '{"parentID":"msg_2425c74c7001QzvcDhHnKuXa28","role":"assistant","modelID":"mock-model","providerID":"mock","finish":"tool-calls","time":{"created":%[3]d,"completed":%[4]d}}');
INSERT INTO part VALUES ('prt_n%[1]da', 'msg_n%[1]d', '%[2]s', %[3]d, %[3]d, '{"type":"step-start"}');
INSERT INTO part VALUES ('prt_n%[1]db', 'msg_n%[1]d', '%[2]s', %[3]d, %[3]d,
  '{"type":"tool","tool":"bash","callID":"call_n%[1]d","state":{"status":"completed","input":{"command":"echo %[1]d"},"output":"%[1]d"}}');
INSERT INTO part VALUES ('prt_n%[1]dc', 'msg_n%[1]d', '%[2]s', %[4]d, %[4]d, '{"type":"step-finish","reason":"tool-calls","tokens":{"total":10,"input":8,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}');
`, k, rootID, t, t+5)
}

// TestNewTurnsAreNumberedFromTheLastOne: a new turn's step number is the
// last numbered turn's and the calls since, not a count of every message
// of the session again (which reads every earlier message's data: a
// session of months has a hundred thousand). The probe: an old reply made
// unreadable after the count would drop out of a recount. When the last
// numbered message is deleted (opencode's revert removes a session's
// newest messages) the session is counted again whole.
func TestNewTurnsAreNumberedFromTheLastOne(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := func(sql string) string {
		t.Helper()
		foreign(t, db, sql, "exec")
		ch, c, err := src.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		cur = c
		return decisions(ch.Steps)
	}
	// The fixture's root has two model calls; its last says "stop", so
	// the first new one is 3.
	if got := next(turn(1)); got != "3:calls bash|3:result bash" {
		t.Fatalf("the first new turn: %q", got)
	}
	foreign(t, db, "UPDATE message SET data = '{not json' WHERE id = 'msg_2425c783e001AwJaTlIaEjkNQO';", "exec")
	if got := next(turn(2)); got != "4:calls bash|4:result bash" {
		t.Errorf("the turn after: %q, want step 4 (counted from turn 3)", got)
	}
	if got := next(turn(3)); got != "5:calls bash|5:result bash" {
		t.Errorf("the next: %q, want step 5", got)
	}
	// Turn 3 deleted with its parts, as a revert's cleanup does, then a
	// new turn (a reader reloads: the message table's top went back), and
	// one more: counted whole, without the unreadable reply (1, n1, n2,
	// n4 before it), not from the deleted turn.
	foreign(t, db, "DELETE FROM part WHERE message_id = 'msg_n3'; DELETE FROM message WHERE id = 'msg_n3';"+turn(4), "exec")
	if cur, err = src.Head(ctx); err != nil {
		t.Fatal(err)
	}
	if got := next(turn(5)); got != "5:calls bash|5:result bash" {
		t.Errorf("after the revert: %q, want step 5", got)
	}
}

// TestRunningSessionIsSentWhenItsStateChanges: a running session goes
// uncounted through Changes (its turns come as rows), so a new turn that
// leaves it running does not send it again; when it ends it comes with its
// summary, counted.
func TestRunningSessionIsSentWhenItsStateChanges(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	foreign(t, db, fmt.Sprintf(userMsg, rootID), "exec")
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	foreign(t, db, turn(1), "exec")
	ch, cur, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if decisions(ch.Steps) != "3:calls bash|3:result bash" || len(ch.Runs) != 0 {
		t.Errorf("a turn that leaves the session running: rows %q, runs %+v", decisions(ch.Steps), ch.Runs)
	}
	foreign(t, db, fmt.Sprintf(`INSERT INTO message VALUES ('msg_end', '%[1]s', 1796409700500, 1796409700510,
  '{"role":"assistant","modelID":"mock-model","providerID":"mock","finish":"stop","time":{"created":1796409700500,"completed":1796409700510}}');
INSERT INTO part VALUES ('prt_end', 'msg_end', '%[1]s', 1796409700505, 1796409700505, '{"type":"text","text":"Done."}');`, rootID), "exec")
	ch, _, err = src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != rootID || ch.Runs[0].Status != store.StatusCompleted || ch.Runs[0].Summary == nil ||
		ch.Runs[0].Summary.Steps != 4 || ch.Runs[0].Steps != 4 || !ch.Runs[0].StatsKnown {
		t.Errorf("the session's end: %+v", ch.Runs)
	}
}
