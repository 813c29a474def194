package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// liveEntry is a live session's registry file, sessions/<pid>.json.
type liveEntry struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	StartedAt int64  `json:"startedAt"` // ms
	ProcStart string `json:"procStart"` // the process's start in clock ticks, as /proc/<pid>/stat says
	Status    string `json:"status"`
}

// liveSessions reads the registry: session id → its lease, for each entry
// whose process is alive (and, where /proc tells, is the process that
// wrote it, not a pid reused since).
func liveSessions(dir string, now time.Time) map[string]store.Lease {
	out := map[string]store.Lease{}
	if dir == "" {
		return out
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		var le liveEntry
		if err != nil || json.Unmarshal(b, &le) != nil || le.PID <= 0 || le.SessionID == "" {
			continue
		}
		if !store.PIDAlive(le.PID) || !sameProcess(le.PID, le.ProcStart) {
			continue
		}
		started := time.UnixMilli(le.StartedAt)
		out[le.SessionID] = store.Lease{Owner: fmt.Sprintf("%d-%d-0", le.PID, started.UnixNano()),
			AcquiredAt: started, RenewedAt: now, TTL: leaseTTL}
	}
	return out
}

// leaseTTL: the registry has no ttl; an entry holds while its process
// lives (the owner pid, which liveness checks), however long the session
// sits idle, so the lease does not lapse by time.
const leaseTTL = 100 * 365 * 24 * time.Hour

// sameProcess compares /proc/<pid>/stat's start time with the registry's;
// true where either is unknown.
func sameProcess(pid int, procStart string) bool {
	if procStart == "" {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return true
	}
	f := strings.Fields(s[i+1:])
	return len(f) < 20 || f[19] == procStart
}
