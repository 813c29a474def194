//go:build unix

package leviath

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFoldBigJournal: the fold `vigil runs` waits for, over the
// cached 1 GB journal of 256 KB tool results that TestBigJournal builds
// (VIGIL_BIG=1 builds it; skipped when it is not there).
func BenchmarkFoldBigJournal(b *testing.B) {
	runs := "/tmp/vigil-bench/leviath-1073741824-262144/runs"
	if _, err := os.Stat(runs + "/../done"); err != nil {
		b.Skip("no cached 1 GB journal: VIGIL_BIG=1 go test -run TestBigJournal ./store/leviath/ builds it")
	}
	root := foldCacheRoot
	foldCacheRoot = func() string { return "" } // the cold fold: no summary read or written
	defer func() { foldCacheRoot = root }()
	foldBig(b, runs)
}

// BenchmarkFoldBigJournalWarm: the same with a summary of the fold in the
// cache (written before the timer starts).
func BenchmarkFoldBigJournalWarm(b *testing.B) {
	runs := "/tmp/vigil-bench/leviath-1073741824-262144/runs"
	if _, err := os.Stat(runs + "/../done"); err != nil {
		b.Skip("no cached 1 GB journal")
	}
	root := foldCacheRoot
	dir := b.TempDir()
	foldCacheRoot = func() string { return dir }
	defer func() { foldCacheRoot = root }()
	s, err := Open(runs)
	if err != nil {
		b.Fatal(err)
	}
	s.Runs(bg)
	s.Close()
	foldBig(b, runs)
}

func foldBig(b *testing.B, runs string) {
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		s, err := Open(runs)
		if err != nil {
			b.Fatal(err)
		}
		rs, err := s.Runs(bg)
		if err != nil || len(rs) != 1 {
			b.Fatal(len(rs), err)
		}
		s.Close()
	}
	// (Wall time on a shared machine is mostly the wait for a core.)
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e9, "cpu-s/op")
}
