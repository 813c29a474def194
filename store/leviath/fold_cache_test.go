package leviath

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// cacheAt points the fold cache at dir for one test, caching every journal
// however short, and collects the reasons a summary was not used.
func cacheAt(t *testing.T, dir string) *[]string {
	t.Helper()
	var whys []string
	root, min, debug := foldCacheRoot, foldCacheBytes, foldCacheDebug
	foldCacheRoot = func() string { return dir }
	foldCacheBytes = 1
	foldCacheDebug = func(path, what string) {
		if strings.HasPrefix(what, "not used") {
			whys = append(whys, filepath.Base(filepath.Dir(path))+": "+what)
		}
	}
	t.Cleanup(func() { foldCacheRoot, foldCacheBytes, foldCacheDebug = root, min, debug })
	return &whys
}

// picture is everything a reader can ask the store, as one text: every
// run, and per run its steps and each step's detail, context samples,
// provider calls, stats, requests; the problems. Two stores over the same
// bytes give the same picture.
func picture(t *testing.T, runs string) (string, int64) {
	t.Helper()
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b strings.Builder
	add := func(what string, v any, err error) {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s: %s %v\n", what, j, err)
	}
	rs, err := s.Runs(bg)
	add("runs", rs, err)
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	for _, id := range ids {
		st, err := s.Steps(bg, id)
		add(id+" steps", st, err)
		for _, x := range st {
			d, err := s.StepDetail(bg, id, x.RowID)
			add(fmt.Sprintf("%s detail %d", id, x.RowID), d, err)
		}
		cs, err := s.ContextSamples(bg, id)
		add(id+" samples", cs, err)
		pc, err := s.ProviderCalls(bg, id)
		add(id+" calls", pc, err)
		f, err := s.RunFacts(bg, id)
		add(id+" facts", f, err)
	}
	stats, err := s.RunStats(bg, ids)
	add("stats", stats, err)
	req, err := s.Requests(bg, false)
	add("requests", req, err)
	var probs []string
	for _, p := range s.Problems() {
		probs = append(probs, p.Error())
	}
	add("problems", probs, nil)
	return b.String(), s.journalBytes.Load()
}

// cold is the picture with no cache at all.
func cold(t *testing.T, runs string) string {
	t.Helper()
	root := foldCacheRoot
	foldCacheRoot = func() string { return "" }
	defer func() { foldCacheRoot = root }()
	p, _ := picture(t, runs)
	return p
}

func samePicture(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			t.Fatalf("%s: not the cold fold's picture, first at line %d:\ngot:  %.600s\nwant: %.600s", what, i, g[i], w[i])
		}
	}
	t.Fatalf("%s: %d lines, the cold fold has %d", what, len(g), len(w))
}

// TestFoldCacheIsTheColdFold: over the fixture's journals (restarts,
// checkpoints, usage, waiting, torn and damaged tails), a store opened
// from the summaries another one wrote reads nothing of the journals and
// answers every question as the cold fold does.
func TestFoldCacheIsTheColdFold(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	want := cold(t, fx.runs)
	whys := cacheAt(t, t.TempDir())
	first, n1 := picture(t, fx.runs)
	samePicture(t, "the fold that wrote the cache", first, want)
	warm, n2 := picture(t, fx.runs)
	samePicture(t, "the fold from the cache", warm, want)
	if len(*whys) > 0 {
		t.Fatalf("summaries not used: %q", *whys)
	}
	// The damaged journals read their tails again (a torn frame is read
	// from its start each time); everything else comes from the summaries.
	if n1 == 0 || n2 > n1/4 {
		t.Fatalf("journal bytes read: %d cold, %d from the cache", n1, n2)
	}
	t.Logf("journal bytes read: %d cold, %d from the cache", n1, n2)
}

// journalCase is a big-journal fixture: one run of n jobs, each an
// assistant turn and a tool result of entry bytes.
func journalCase(t *testing.T, jobs, entry int) (runs, journal string, g *genRun) {
	t.Helper()
	runs = filepath.Join(t.TempDir(), "runs")
	m := baseMeta("big-1785427200-0123456789ab", "big", "A run with a long journal", t0)
	g = newGenRun(t, runs, m, true, stdRegions(m.task)...)
	for i := range jobs {
		appendJob(g, i, entry)
	}
	g.writeMeta()
	return runs, filepath.Join(g.dir, "run.lvr"), g
}

func appendJob(g *genRun, i, entry int) {
	g.meta.prompt += 1000
	g.meta.iteration++
	call := fmt.Sprintf("toolu_%d", i)
	g.progress(t0+int64(i), g.appendD("conversation",
		turnE(fmt.Sprintf("turn %d", i), genCall{call, "bash", args("command", "cat big.log")}),
		resultE(call, "bash", fmt.Sprintf("result %d\n", i)+strings.Repeat("x", entry), false)))
}

// warmThen writes the cache of the journal, changes it with change, and
// checks that the next store reads what the journal now holds: why is
// the reason the summary must not have been used ("" when it may be).
func warmThen(t *testing.T, change func(runs, journal, cache string, g *genRun), why string) {
	t.Helper()
	runs, journal, g := journalCase(t, 40, 8<<10)
	cache := t.TempDir()
	whys := cacheAt(t, cache)
	picture(t, runs)
	change(runs, journal, cache, g)
	got, _ := picture(t, runs)
	if why == "" && len(*whys) > 0 || why != "" && (len(*whys) != 1 || !strings.Contains((*whys)[0], why)) {
		t.Errorf("reasons the summary was not used: %q, want one saying %q", *whys, why)
	}
	samePicture(t, "after the change", got, cold(t, runs))
}

// rewriteAt writes b over the journal at off, keeping its size.
func rewriteAt(t *testing.T, journal string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(journal, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// turnAt is where the journal spells "turn N" (the N-th job's text).
func turnAt(t *testing.T, journal string, n int) int64 {
	t.Helper()
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), fmt.Sprintf(`"turn %d"`, n))
	if i < 0 {
		t.Fatal("no turn", n)
	}
	return int64(i + 1)
}

func TestFoldCacheAppended(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		for i := 40; i < 50; i++ {
			appendJob(g, i, 8<<10)
		}
		g.writeMeta()
	}, "")
}

func TestFoldCacheTruncated(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		if err := os.Truncate(journal, fileSize(t, journal)*2/3); err != nil {
			t.Fatal(err)
		}
	}, "shorter")
}

// The same size, one turn's text changed in the middle (between the
// sampled blocks): only the mtime tells.
func TestFoldCacheRewrittenSameSize(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		time.Sleep(10 * time.Millisecond) // a later mtime, on any file system's clock
		rewriteAt(t, journal, turnAt(t, journal, 21), []byte("TURN"))
	}, "written over in place")
}

// The same size and mtime (put back), a turn near the start changed: the
// sampled bytes tell.
func TestFoldCacheRewrittenSameSizeAndMTime(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		fi, _ := os.Stat(journal)
		rewriteAt(t, journal, turnAt(t, journal, 1), []byte("TURN"))
		os.Chtimes(journal, fi.ModTime(), fi.ModTime())
	}, "bytes under it changed")
}

// The same size and mtime (put back), one byte of a turn's text changed
// where a sampled check does not look: outside the first and last 64 KiB
// and the 14 blocks of 4 KiB spread between them that the check before
// the whole-prefix hash read. That check served the summary, and the old
// text with it; only a hash of every byte tells.
func TestFoldCacheRewrittenOutsideEverySample(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		fi, err := os.Stat(journal)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(cacheFile(cache, journal, deviceOf(fi), inodeOf(fi)))
		if err != nil {
			t.Fatal(err)
		}
		hd, _, why := decodeFold(b)
		if why != "" {
			t.Fatal(why)
		}
		at := int64(-1)
		for n := 1; n < 40 && at < 0; n++ {
			if a := turnAt(t, journal, n); !sampledOnce(hd.Off, a) {
				at = a
			}
		}
		if at < 0 {
			t.Fatal("every turn lies in a block the sampled check read")
		}
		rewriteAt(t, journal, at, []byte("T"))
		os.Chtimes(journal, fi.ModTime(), fi.ModTime())
	}, "bytes under it changed")
}

// sampledOnce says whether byte at of the journal lay in the bytes the
// sampled check of a summary of [0, off) hashed.
func sampledOnce(off, at int64) bool {
	const edge, block, blocks = 64 << 10, 4 << 10, 14
	if at < edge || at >= off-edge {
		return true
	}
	for i := int64(1); i <= blocks; i++ {
		if from := off * i / (blocks + 1); at >= from && at < from+block {
			return true
		}
	}
	return false
}

// Rewritten in place and appended to: neither size nor mtime says it, the
// sampled tail of what the summary covers does.
func TestFoldCacheRewrittenThenAppended(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		rewriteAt(t, journal, turnAt(t, journal, 39), []byte("TURN"))
		appendJob(g, 40, 8<<10)
	}, "bytes under it changed")
}

// Replaced by rename with a file of the same size and mtime, a turn in
// the middle changed, and the summary found under the new inode too (an
// inode number used again, or two keys of one hash): only the key in the
// file tells.
func TestFoldCacheReplacedByRename(t *testing.T) {
	warmThen(t, func(runs, journal, cache string, g *genRun) {
		fi, err := os.Stat(journal)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		copy(b[turnAt(t, journal, 21):], "TURN")
		if err := os.WriteFile(journal+".new", b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(journal+".new", fi.ModTime(), fi.ModTime())
		if err := os.Rename(journal+".new", journal); err != nil {
			t.Fatal(err)
		}
		nfi, _ := os.Stat(journal)
		if inodeOf(nfi) == inodeOf(fi) {
			t.Fatal("the rename kept the inode")
		}
		old, err := os.ReadFile(cacheFile(cache, journal, deviceOf(fi), inodeOf(fi)))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cacheFile(cache, journal, deviceOf(nfi), inodeOf(nfi)), old, 0o600)
	}, "another journal's")
}

// TestFoldCacheDamagedFile: a cache file cut short, with a flipped byte,
// of another format version, of another program, or not a file at all is
// ignored with one reason, and the journal folded as if there were none.
func TestFoldCacheDamagedFile(t *testing.T) {
	for _, c := range []struct {
		name, why string
		spoil     func(t *testing.T, p string)
	}{
		{"cut short", "damaged", func(t *testing.T, p string) { os.Truncate(p, fileSize(t, p)-10) }},
		{"a flipped byte", "damaged", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			os.WriteFile(p, b, 0o600)
		}},
		{"another program's", "not a vigil fold cache", func(t *testing.T, p string) { os.WriteFile(p, []byte("SQLite format 3\x00"), 0o600) }},
		{"empty", "not a vigil fold cache", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }},
		{"another version", "format 99", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			hd, fs, why := decodeFold(b)
			if why != "" {
				t.Fatal(why)
			}
			hd.Version = 99
			os.WriteFile(p, encodeFold(hd, fs), 0o600)
		}},
		{"a directory", "a directory, not a store file", func(t *testing.T, p string) { os.Remove(p); os.Mkdir(p, 0o700) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs, _, _ := journalCase(t, 20, 4<<10)
			dir := t.TempDir()
			whys := cacheAt(t, dir)
			picture(t, runs)
			files, _ := filepath.Glob(filepath.Join(dir, "*.fold"))
			if len(files) != 1 {
				t.Fatalf("cache files: %q", files)
			}
			c.spoil(t, files[0])
			got, n := picture(t, runs)
			if len(*whys) != 1 || !strings.Contains((*whys)[0], c.why) {
				t.Errorf("reasons: %q, want one saying %q", *whys, c.why)
			}
			if n < fileSize(t, filepath.Join(runs, "big-1785427200-0123456789ab", "run.lvr"))-preambleLen {
				t.Errorf("read %d journal bytes: not folded from the start", n)
			}
			samePicture(t, c.name, got, cold(t, runs))
		})
	}
}

// TestFoldCacheUnwritable: with nowhere to write (the cache directory
// would be under a file), the store folds and answers as ever, and leaves
// nothing behind.
func TestFoldCacheUnwritable(t *testing.T) {
	runs, _, _ := journalCase(t, 20, 4<<10)
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o600)
	whys := cacheAt(t, filepath.Join(file, "vigil"))
	got, _ := picture(t, runs)
	again, n := picture(t, runs)
	samePicture(t, "unwritable cache", got, cold(t, runs))
	samePicture(t, "unwritable cache, again", again, got)
	if n == 0 || len(*whys) > 0 {
		t.Fatalf("read %d journal bytes; reasons %q", n, *whys)
	}
	runDir := filepath.Join(runs, "big-1785427200-0123456789ab")
	if ents, _ := os.ReadDir(runDir); len(ents) != 2 {
		t.Fatalf("the run directory holds %d files", len(ents))
	}
}

// TestFoldStateCoversTheRun: every field of runState is either written to
// the cache or read again by each process. A field added to runState
// fails here until it is put in one list or the other.
func TestFoldStateCoversTheRun(t *testing.T) {
	cached := "off version tornAt scanFrom badNoted ident jmeta hasJMeta win rows samples calls turns attributed " +
		"rowTokens callTurn timing owners ckpts ownerAt restart jstatus paired records lastAt skipped episodes ordRows"
	perProcess := "id dir lvr metaSig interSig jerr fmeta hasFMeta fmetaErr inter loggedSig pending done foldTo " +
		"prefix printOff print readPrint born tornNotedAt"
	known := map[string]bool{}
	for _, f := range strings.Fields(cached + " " + perProcess) {
		known[f] = true
	}
	rt := reflect.TypeOf(runState{})
	for i := range rt.NumField() {
		if !known[rt.Field(i).Name] {
			t.Errorf("runState.%s: neither in the fold cache (foldState) nor read again by each process", rt.Field(i).Name)
		}
	}
	if n := reflect.TypeOf(foldState{}).NumField(); n != len(strings.Fields(cached)) {
		t.Errorf("foldState has %d fields for %d cached ones", n, len(strings.Fields(cached)))
	}
}

// TestFoldCachePrune: summaries unused for 30 days and half-written files
// over an hour old go; past 256 files the least recently used go.
func TestFoldCachePrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	put := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	put("old.fold", 31*24*time.Hour)
	put(".fold-123", 2*time.Hour)
	put(".fold-456", time.Minute) // being written now
	put("other-file", 365*24*time.Hour)
	for i := range foldCacheMaxFiles + 3 {
		put(fmt.Sprintf("%03d.fold", i), time.Duration(i)*time.Minute)
	}
	pruneFolds(dir, now)
	for name, want := range map[string]bool{"old.fold": false, ".fold-123": false, ".fold-456": true, "other-file": true,
		"000.fold": true, fmt.Sprintf("%03d.fold", foldCacheMaxFiles-1): true,
		fmt.Sprintf("%03d.fold", foldCacheMaxFiles): false, fmt.Sprintf("%03d.fold", foldCacheMaxFiles+2): false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", name, err == nil, want)
		}
	}
}

// TestFoldCacheLongTailHashedOnce: a summary with a tail long enough for
// the background fold is hashed once, by that fold (not also at open),
// and the store still reads as the cold fold does.
func TestFoldCacheLongTailHashedOnce(t *testing.T) {
	runs, _, g := journalCase(t, 40, 8<<10)
	cache := t.TempDir()
	whys := cacheAt(t, cache)
	picture(t, runs)
	for i := 40; i < 50; i++ {
		appendJob(g, i, 8<<10)
	}
	g.writeMeta()
	oldBytes := deferBytes
	deferBytes = 1
	defer func() { deferBytes = oldBytes }()
	before := foldVerifies.Load()
	got, _ := picture(t, runs)
	if n := foldVerifies.Load() - before; n != 1 {
		t.Errorf("the summary was hashed %d times, want once", n)
	}
	if len(*whys) > 0 {
		t.Errorf("reasons the summary was not used: %q", *whys)
	}
	deferBytes = oldBytes
	samePicture(t, "long tail, deferred", got, cold(t, runs))
}
