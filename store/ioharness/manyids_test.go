package ioharness

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Past manyIDs runs, RunStats and Requests filter in Go instead of naming
// every id in SQL: the answer for the runs asked about is the same, and a
// run not asked about stays out.
func TestManyIDsAnswerAsFew(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var runs []string
	for i := 0; i < 4; i++ {
		runs = append(runs, must[string](t)(s.StartRun(ctx, "g"+strconv.Itoa(i), "/w")))
	}
	// runs[1] is a conversational reply: its spend is its provider calls.
	rawDB(t, s.Path()).Exec("UPDATE runs SET turn_kind = 'reply' WHERE id IN (?, ?)", runNum(runs[1]), runNum(runs[3]))
	for _, r := range runs {
		n := int64(50)
		if err := s.RecordProviderCall(ctx, r, store.ProviderCall{Step: 1, Attempt: 1, Provider: "p", Model: "m", TotalTokens: &n}); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckpointStep(ctx, r, harness.StepRecord{Step: 1, Decision: "d", Result: "r", Tokens: 7}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutPending(ctx, r, 1, "write", "a.txt", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutQuestion(ctx, r, 1, "why?", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	asked := runs[:2] // runs[2] and runs[3] are not asked about
	many := append([]string{}, asked...)
	for i := 0; len(many) <= manyIDs; i++ {
		many = append(many, strconv.Itoa(900_000+i)) // no such run
	}

	few, err := s.RunStats(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	lots, err := s.RunStats(ctx, many)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range asked {
		if few[id] != lots[id] {
			t.Errorf("RunStats(%s): %+v of %d ids, %+v of %d", id, lots[id], len(many), few[id], len(asked))
		}
	}
	if got := lots[runs[1]].Tokens; got != 50 {
		t.Errorf("reply run's tokens %d, want its provider calls' 50", got)
	}
	if _, ok := lots[runs[3]]; ok {
		t.Errorf("a reply not asked about is counted: %+v", lots[runs[3]])
	}

	fewReqs, err := s.Requests(ctx, false, asked...)
	if err != nil {
		t.Fatal(err)
	}
	lotsReqs, err := s.Requests(ctx, false, many...)
	if err != nil {
		t.Fatal(err)
	}
	if len(fewReqs) != 4 || !reflect.DeepEqual(fewReqs, lotsReqs) {
		t.Errorf("Requests: %d of %d ids, %d of %d (want 4, the same)", len(lotsReqs), len(many), len(fewReqs), len(asked))
	}
}
