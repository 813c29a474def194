package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A registry entry whose pid is alive and whose procStart is that
// process's makes the session live; the same entry with another start
// (a reused pid) or a dead pid does not.
func TestRegistryLiveness(t *testing.T) {
	cfg, sid := fixtureStore(t)
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc: " + err.Error())
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	reg := filepath.Join(cfg, "sessions")
	must(t, os.MkdirAll(reg, 0o755))
	write := func(pid int, procStart string) {
		b := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"startedAt":%d,"procStart":%q,"status":"busy"}`, pid, sid, time.Now().UnixMilli(), procStart)
		must(t, os.WriteFile(filepath.Join(reg, "1.json"), []byte(b), 0o600))
	}
	for _, c := range []struct {
		name      string
		pid       int
		procStart string
		live      bool
	}{
		{"this process", os.Getpid(), fields[19], true},
		{"a reused pid", os.Getpid(), fields[19] + "1", false},
		{"a dead pid", 1 << 22, "", false},
	} {
		write(c.pid, c.procStart)
		src := open(t, cfg)
		root := runsByID(t, src)[sid]
		if got := root.Lease != nil && root.Status == store.StatusRunning; got != c.live {
			t.Errorf("%s: live %v, want %v (%+v)", c.name, got, c.live, root)
		}
		if c.live {
			if st := store.StateOf(root, root.Lease, src.RecordsLeases(), false, time.Now()); st != store.StateRunning {
				t.Errorf("%s: state %v", c.name, st)
			}
			cur, err := src.Head(context.Background())
			must(t, err)
			must(t, os.Remove(filepath.Join(reg, "1.json")))
			ch, _, err := src.Changes(context.Background(), cur)
			must(t, err)
			if !ch.LeasesChanged || len(ch.Leases) != 0 || len(ch.Runs) != 2 {
				t.Errorf("the session ended: changes %+v", ch)
			}
		}
	}
}
