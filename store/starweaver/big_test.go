package starweaver

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/internal/testkit/bigrun"
)

// TestBigToolReturn: a tool whose return is 200 MB, in one stream record:
// show, show --json and the explorer of its run in bounded memory, the
// record never decoded whole (shrink.go). (VIGIL_BIG=1)
func TestBigToolReturn(t *testing.T) {
	bigrun.Skip(t)
	dir := bigrun.CacheDir(t, "starweaver-return-200m")
	path, runFile := filepath.Join(dir, "starweaver.sqlite"), filepath.Join(dir, "run")
	if _, err := os.Stat(path + ".done"); err != nil {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		buildV07(t, dir)
		db, err := sql.Open("sqlite", sqlitex.DSN(path, ""))
		if err != nil {
			t.Fatal(err)
		}
		var rowid int64
		var run string
		if err := db.QueryRow(`SELECT rowid, run_id FROM stream_records WHERE CAST(record AS TEXT) LIKE '%"tool_return"%' ORDER BY rowid LIMIT 1`).Scan(&rowid, &run); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat(strings.Repeat("0123456789abcdef", 64)+"\n", 200<<20/1025)
		if _, err := db.Exec(`UPDATE stream_records SET record = json_set(record, '$.payload.event.tool_return.content', ?) WHERE rowid = ?`, big, rowid); err != nil {
			t.Fatal(err)
		}
		db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		db.Close()
		os.WriteFile(runFile, []byte(run), 0o644)
		os.WriteFile(path+".done", nil, 0o644)
	}
	run, _ := os.ReadFile(runFile)
	// Best of three, this build beside VIGIL_BIG_OLD's when set: the
	// machine is shared, so wall time is an upper bound and CPU is logged.
	bins := [][2]string{{"new", bigrun.Binary(t)}}
	if old := bigrun.Old(); old != "" {
		bins = append(bins, [2]string{"old", old})
	}
	for round := 0; round < 3; round++ {
		for _, b := range bins {
			for _, args := range [][]string{{"show", string(run)}, {"show", string(run), "--json"}} {
				r := bigrun.RunWith(t, b[1], append(args, "--store", path)...)
				t.Logf("%s vigil show %-6s %5.2fs wall %5.2fs CPU %4d MB  exit %d", b[0], strings.Join(args[2:], " "), r.Took.Seconds(), r.CPU.Seconds(), r.MaxRSS>>20, r.Code)
				if r.Code != 0 || r.Took > 10*time.Second || r.MaxRSS > 200<<20 {
					t.Errorf("%s vigil %v: exit %d, %v, %d MB (bounds 10 s, 200 MB): %s", b[0], args, r.Code, r.Took, r.MaxRSS>>20, r.Stderr)
				}
				if r.OutBytes > 4<<20 {
					t.Errorf("vigil %v wrote %d bytes: the 200 MB return was not cut", args, r.OutBytes)
				}
			}
			// The first frame reads no big record (the run's counts are
			// "…" until RunStats has read it: TestBigRecordCountsWaitForRunStats).
			first, hwm := bigrun.ExploreWith(t, b[1], "SWACC", 2*time.Second, "--store", path, "--run", string(run))
			t.Logf("%s explorer: rows after %.2fs, %d MB", b[0], first.Seconds(), hwm>>20)
			if first > 5*time.Second || hwm > 200<<20 {
				t.Errorf("%s explorer: rows after %v, %d MB", b[0], first, hwm>>20)
			}
		}
	}
	t.Logf("load average: %s", loadavg())
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}
