package gate

import (
	"context"
	"sync"
	"testing"
)

// Deciders racing on one foreign request, each through its own connection
// as separate processes would: exactly one claim wins, and every other is
// handed the winner's claim; Settle and Release are what later deciders
// read.
func TestClaimRace(t *testing.T) {
	_, p := newHook(t)
	ctx := context.Background()
	const n = 8
	won := make([]bool, n)
	held := make([]Claim, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := OpenHook(p)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			verdict := []string{"approve", "deny"}[i%2]
			if won[i], held[i], err = h.Claim(ctx, Claim{Key: "opencode per_1", Verdict: verdict, DecidedBy: verdict + "-er"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if won[i] {
			if winner >= 0 {
				t.Fatalf("claims %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no claim won")
	}
	for i := range n {
		if held[i].Verdict != held[winner].Verdict || held[i].DecidedBy != held[winner].DecidedBy {
			t.Errorf("decider %d was handed %+v; the winner claimed %+v", i, held[i], held[winner])
		}
	}
	h, err := OpenHook(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Settle(ctx, "opencode per_1", ClaimAnswered); err != nil {
		t.Fatal(err)
	}
	if _, c, _ := h.Claim(ctx, Claim{Key: "opencode per_1", Verdict: "approve"}); c.Outcome != ClaimAnswered {
		t.Errorf("a later claim read %+v", c)
	}
	if err := h.Release(ctx, "opencode per_1"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := h.Claim(ctx, Claim{Key: "opencode per_1", Verdict: "approve"}); !ok || err != nil {
		t.Errorf("a released claim was not taken again: %v", err)
	}
	if err := h.Remember(ctx, "opencode per_2", `{"id":"per_2"}`); err != nil {
		t.Fatal(err)
	}
	h.Remember(ctx, "opencode per_2", `{"id":"other"}`)
	h.Remember(ctx, "codex x", `{}`)
	if kv, err := h.Remembered(ctx, "opencode "); err != nil || len(kv) != 1 || kv[0][1] != `{"id":"per_2"}` {
		t.Errorf("remembered %v %v", kv, err)
	}
}
