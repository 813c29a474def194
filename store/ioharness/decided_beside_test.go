package ioharness

import (
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// beside is the files in dir and a digest of each.
func beside(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func names(m map[string][32]byte) []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Deciding a request that is already decided writes nothing, so it leaves
// the store as it found it: no -wal or -shm made beside a WAL store that
// had none, and a -shm that was there (garbage) not rewritten. The old
// code took the write lock first and found the request decided under it:
// `vigil approve` of a decided request left a new -wal and -shm behind
// (and, with a -shm there, rewrote it), while one of no such request left
// nothing.
func TestDecidingADecidedRequestLeavesTheStoreAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := w.StartRun(ctx, "a run asks", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
		t.Fatal(err)
	}
	content := "x"
	id, err := w.PutPending(ctx, run, 1, "write", "a.txt", &content)
	if err != nil {
		t.Fatal(err)
	}
	qid, err := w.PutQuestion(ctx, run, 1, "which?", "", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	decider, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []store.Decision{{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictDeny},
		{Key: store.RequestKey{Kind: store.Question, ID: qid}, Text: "a"}} {
		if res, err := decider.Decide(ctx, d); err != nil || !res.Won {
			t.Fatal(res, err)
		}
	}
	if err := decider.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// As io-harness leaves a store it closed: WAL in the header, nothing beside.
	if out, err := exec.Command("sqlite3", path, "PRAGMA wal_checkpoint(TRUNCATE)").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")

	garbage := make([]byte, 32<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	for _, shm := range []bool{false, true} {
		if shm {
			if err := os.WriteFile(path+"-shm", garbage, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := beside(t, dir)
		for _, d := range []store.Decision{{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictApprove},
			{Key: store.RequestKey{Kind: store.Question, ID: qid}, Text: "b"}} {
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Decide(ctx, d)
			s.Close()
			if err != nil || res.Won || res.Decision == "" {
				t.Fatalf("%v: %+v %v, want the decision it already had", d.Key, res, err)
			}
			after := beside(t, dir)
			if len(after) != len(before) {
				t.Fatalf("-shm there %v: deciding decided %v left %v beside the store, it had %v", shm, d.Key, names(after), names(before))
			}
			for n, h := range before {
				if after[n] != h {
					t.Fatalf("-shm there %v: deciding decided %v changed %s", shm, d.Key, n)
				}
			}
		}
	}
}
