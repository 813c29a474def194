package watch

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// openRawWriter opens a bare database with one table of rows.
func openRawWriter(abs, syncMode string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", OmitHost: true, Path: abs,
		RawQuery: "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(" + syncMode + ")"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS steps(
		id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, step INTEGER,
		decision TEXT, tokens INTEGER, ts_ns INTEGER)`); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openStoreWriter opens (or creates) an io-harness store and starts a run
// it holds the lease of.
func openStoreWriter(path string) (*harness.Store, string, error) {
	w, err := harness.OpenWriter(path)
	if err != nil {
		if w, err = harness.Create(path); err != nil {
			return nil, "", err
		}
	}
	ctx := context.Background()
	run, err := w.StartRun(ctx, "latency bench", "/bench")
	if err == nil {
		_, err = w.AcquireLease(ctx, run, harness.DefaultLeaseTTL)
	}
	if err != nil {
		w.Close()
		return nil, "", err
	}
	return w, run, nil
}

// childEnv makes the re-executed test binary act as a writer process.
const childEnv = "VIGIL_WATCH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "writer" {
		os.Exit(writerMain(os.Args[1:]))
	}
	os.Exit(testkit.Main(m))
}

// ---------------------------------------------------------------------------
// The writer: a separate OS process standing in for the harness. It reads
// commands from stdin and answers one line per command on stdout:
//
//	insert N            N autocommit INSERTs     -> ok <last id> <commit-return unix ns>
//	update ID           UPDATE of one row        -> ok <rows affected>
//	checkpoint          wal_checkpoint(TRUNCATE) -> ok <busy> <log> <checkpointed>
//	rate R N LOG        N INSERTs paced at R/s; per commit "id return_ns duration_ns" to LOG
//	                                             -> ok <max -wal size seen>
//	quit                close and exit           -> ok

func writerMain(args []string) int {
	fl := flag.NewFlagSet("writer", flag.ContinueOnError)
	dbPath := fl.String("db", "", "database path")
	syncMode := fl.String("sync", "NORMAL", "synchronous pragma")
	run := fl.String("run", "a", "run_id of the rows")
	asStore := fl.Bool("store", false, "write an io-harness store through the store layer (one CheckpointStep per insert)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	abs, err := filepath.Abs(*dbPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 2
	}
	var db *sql.DB
	if !*asStore {
		if db, err = openRawWriter(abs, *syncMode); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 2
		}
		defer db.Close()
	}

	out := bufio.NewWriter(os.Stdout)
	reply := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	step := 0
	insert := func() (id int64, ret time.Time, dur time.Duration, err error) {
		step++
		t0 := time.Now()
		res, err := db.Exec(`INSERT INTO steps(run_id, step, decision, tokens, ts_ns) VALUES(?, ?, NULL, ?, ?)`,
			*run, step, step*10, t0.UnixNano())
		ret = time.Now()
		if err != nil {
			return 0, ret, 0, err
		}
		id, err = res.LastInsertId()
		return id, ret, ret.Sub(t0), err
	}
	if *asStore {
		// The harness as vigil's users run it: a step committed through the
		// store layer (step row + checkpoint event + lease renewal), with
		// io-harness's own settings (synchronous left at SQLite's default).
		// The id logged is the step number.
		w, runID, err := openStoreWriter(abs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 2
		}
		defer w.Close()
		insert = func() (int64, time.Time, time.Duration, error) {
			step++
			t0 := time.Now()
			err := w.CheckpointStep(context.Background(), runID, harness.StepRecord{Step: step,
				Decision: fmt.Sprintf("read src/file%d.go", step), Result: "[read] 40 lines", Tokens: int64(step * 10)})
			ret := time.Now()
			return int64(step), ret, ret.Sub(t0), err
		}
	}

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		if db == nil && (f[0] == "update" || f[0] == "checkpoint") {
			reply("err %s needs the raw table (not -store)", f[0])
			continue
		}
		switch f[0] {
		case "insert":
			n, _ := strconv.Atoi(f[1])
			var id int64
			var ret time.Time
			var err error
			for range n {
				if id, ret, _, err = insert(); err != nil {
					break
				}
			}
			if err != nil {
				reply("err %v", err)
				continue
			}
			reply("ok %d %d", id, ret.UnixNano())
		case "update":
			id, _ := strconv.ParseInt(f[1], 10, 64)
			res, err := db.Exec(`UPDATE steps SET decision = 'approved' WHERE id = ?`, id)
			if err != nil {
				reply("err %v", err)
				continue
			}
			n, _ := res.RowsAffected()
			reply("ok %d", n)
		case "checkpoint":
			var busy, logFrames, ckpt int
			if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &ckpt); err != nil {
				reply("err %v", err)
				continue
			}
			reply("ok %d %d %d", busy, logFrames, ckpt)
		case "rate":
			rate, _ := strconv.ParseFloat(f[1], 64)
			n, _ := strconv.Atoi(f[2])
			lf, err := os.Create(f[3])
			if err != nil {
				reply("err %v", err)
				continue
			}
			lw := bufio.NewWriter(lf)
			var maxWAL int64
			start := time.Now()
			for i := range n {
				due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				id, ret, dur, err2 := insert()
				if err2 != nil {
					err = err2
					break
				}
				fmt.Fprintf(lw, "%d %d %d\n", id, ret.UnixNano(), dur.Nanoseconds())
				if i%10 == 0 || i == n-1 {
					if fi, err := os.Stat(abs + "-wal"); err == nil && fi.Size() > maxWAL {
						maxWAL = fi.Size()
					}
				}
			}
			lw.Flush()
			lf.Close()
			if err != nil {
				reply("err %v", err)
				continue
			}
			reply("ok %d", maxWAL)
		case "quit":
			if db != nil {
				db.Close()
			}
			reply("ok")
			return 0
		default:
			reply("err unknown command %q", f[0])
		}
	}
	return 0
}

// writerProc is the test side of a writer process.
type writerProc struct {
	tb    testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	quit  bool
}

func startWriter(tb testing.TB, dbPath, syncMode, run string, extra ...string) *writerProc {
	tb.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-db", dbPath, "-sync", syncMode, "-run", run}, extra...)...)
	cmd.Env = append(os.Environ(), childEnv+"=writer")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	wp := &writerProc{tb: tb, cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(wp.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			wp.lines <- sc.Text()
		}
	}()
	tb.Cleanup(func() {
		if !wp.quit {
			stdin.Close()
		}
		done := make(chan struct{})
		go func() {
			for range wp.lines {
			}
			cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return wp
}

// do sends one command and returns the fields of the "ok" reply.
func (wp *writerProc) do(line string, timeout time.Duration) []string {
	wp.tb.Helper()
	if _, err := fmt.Fprintln(wp.stdin, line); err != nil {
		wp.tb.Fatalf("writer %q: %v", line, err)
	}
	select {
	case r, ok := <-wp.lines:
		if !ok {
			wp.tb.Fatalf("writer %q: process exited", line)
		}
		f := strings.Fields(r)
		if len(f) == 0 || f[0] != "ok" {
			wp.tb.Fatalf("writer %q: %s", line, r)
		}
		return f[1:]
	case <-time.After(timeout):
		wp.tb.Fatalf("writer %q: no answer in %v", line, timeout)
	}
	return nil
}

// insert commits one row and returns its id and when COMMIT returned.
func (wp *writerProc) insert() (int64, time.Time) {
	wp.tb.Helper()
	f := wp.do("insert 1", 10*time.Second)
	id, _ := strconv.ParseInt(f[0], 10, 64)
	ns, _ := strconv.ParseInt(f[1], 10, 64)
	return id, time.Unix(0, ns)
}

func (wp *writerProc) stop() {
	wp.tb.Helper()
	wp.do("quit", 10*time.Second)
	wp.quit = true
	wp.stdin.Close()
}

// ---------------------------------------------------------------------------
// The tail: the reader side as the store layer will do it. One pinned mode=ro
// connection, short autocommit reads, never a held snapshot.

type tail struct {
	path  string
	mu    sync.Mutex
	db    *sql.DB
	conn  *sql.Conn
	q, dv *sql.Stmt // prepared once per connection: parsing costs more than running
	last  int64
	seen  map[string]time.Time // "run/id" -> when this process first had the row
	order []string
	rows  int
}

func newTail(path string) *tail { return &tail{path: path, seen: map[string]time.Time{}} }

func (t *tail) openLocked(ctx context.Context) error {
	if t.conn != nil {
		return nil
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: t.path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.PingContext(ctx)
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		db.Close()
		return err
	}
	t.db, t.conn = db, conn
	return nil
}

const tailQuery = `SELECT id, run_id, step, decision, tokens, ts_ns FROM steps WHERE id > ? ORDER BY id LIMIT 1000`

func (t *tail) closeLocked() {
	if t.q != nil {
		t.q.Close()
		t.q = nil
	}
	if t.dv != nil {
		t.dv.Close()
		t.dv = nil
	}
	if t.conn != nil {
		t.conn.Close()
		t.db.Close()
		t.conn, t.db = nil, nil
	}
}

// close drops the connection (Gone); reset also forgets the cursor (Replaced).
func (t *tail) close() { t.mu.Lock(); t.closeLocked(); t.mu.Unlock() }
func (t *tail) reset() { t.mu.Lock(); t.closeLocked(); t.last = 0; t.mu.Unlock() }

func (t *tail) shutdown() { t.close() }

// refresh reads the rows after the cursor: the raw SQL tail query.
func (t *tail) refresh(ctx context.Context) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.openLocked(ctx); err != nil {
		return 0, err
	}
	if t.q == nil {
		q, err := t.conn.PrepareContext(ctx, tailQuery)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				return 0, nil // a database being created
			}
			t.closeLocked()
			return 0, err
		}
		t.q = q
	}
	n := 0
	for {
		rows, err := t.q.QueryContext(ctx, t.last)
		if err != nil {
			t.closeLocked()
			return n, err
		}
		k := 0
		for rows.Next() {
			var id, step, tokens, ts int64
			var run string
			var decision sql.NullString
			if err := rows.Scan(&id, &run, &step, &decision, &tokens, &ts); err != nil {
				rows.Close()
				return n, err
			}
			key := run + "/" + strconv.FormatInt(id, 10)
			if _, ok := t.seen[key]; !ok {
				t.seen[key] = time.Now()
				t.order = append(t.order, key)
			}
			t.last = id
			k++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return n, err
		}
		n += k
		t.rows += k
		if k < 1000 {
			return n, nil
		}
	}
}

// dataVersion is PRAGMA data_version on the pinned connection.
func (t *tail) dataVersion() (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx := context.Background()
	if err := t.openLocked(ctx); err != nil {
		return 0, err
	}
	if t.dv == nil {
		dv, err := t.conn.PrepareContext(ctx, `PRAGMA data_version`)
		if err != nil {
			t.closeLocked()
			return 0, err
		}
		t.dv = dv
	}
	var v uint64
	if err := t.dv.QueryRowContext(ctx).Scan(&v); err != nil {
		t.closeLocked()
		return 0, err
	}
	return v, nil
}

func (t *tail) seenAt(run string, id int64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.seen[run+"/"+strconv.FormatInt(id, 10)]
	return at, ok
}

func (t *tail) count(run string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k := range t.seen {
		if strings.HasPrefix(k, run+"/") {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------------------
// The consumer: what the TUI will do with a Watcher.

type sigRec struct {
	Signal
	got   time.Time // when the consumer received it
	found int       // rows found by the refresh of a Changed
	err   error
}

type consumer struct {
	w    *Watcher
	mu   sync.Mutex
	recs []sigRec
	done chan struct{}
}

type handlers struct {
	refresh  func(context.Context) (int, error)
	gone     func()
	replaced func()
}

func tailHandlers(t *tail) handlers {
	return handlers{refresh: t.refresh, gone: t.close, replaced: t.reset}
}

func startConsumer(tb testing.TB, w *Watcher, h handlers) *consumer {
	c := &consumer{w: w, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		ctx := context.Background()
		for s := range w.C() {
			r := sigRec{Signal: s, got: time.Now()}
			switch s.Kind {
			case Changed:
				if h.refresh != nil {
					r.found, r.err = h.refresh(ctx)
				}
				w.Ack(r.found > 0)
			case Gone:
				if h.gone != nil {
					h.gone()
				}
			case Replaced:
				if h.replaced != nil {
					h.replaced()
				}
			}
			c.mu.Lock()
			c.recs = append(c.recs, r)
			c.mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		w.Close()
		<-c.done
	})
	return c
}

func (c *consumer) records() []sigRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.recs)
}

func (c *consumer) count(k Kind) int {
	n := 0
	for _, r := range c.records() {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// kinds lists the kinds of all signals other than Changed, in order.
func (c *consumer) kinds() []Kind {
	var ks []Kind
	for _, r := range c.records() {
		if r.Kind != Changed {
			ks = append(ks, r.Kind)
		}
	}
	return ks
}

// settle waits until no signal has arrived for quiet (at most limit).
func (c *consumer) settle(quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	n := len(c.records())
	last := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		if m := len(c.records()); m != n {
			n, last = m, time.Now()
		} else if time.Since(last) >= quiet {
			return
		}
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(tb testing.TB, timeout time.Duration, cond func() bool, format string, a ...any) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v: "+format, append([]any{timeout}, a...)...)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// recv waits for one signal.
func recv(tb testing.TB, w *Watcher, timeout time.Duration) Signal {
	tb.Helper()
	select {
	case s, ok := <-w.C():
		if !ok {
			tb.Fatal("signal channel closed")
		}
		return s
	case <-time.After(timeout):
		tb.Fatalf("no signal within %v", timeout)
	}
	return Signal{}
}

// quietFor reports whether no signal arrives for d.
func quietFor(w *Watcher, d time.Duration) (Signal, bool) {
	select {
	case s := <-w.C():
		return s, false
	case <-time.After(d):
		return Signal{}, true
	}
}

func appendTo(tb testing.TB, path, text string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func removeDB(tb testing.TB, path string) {
	tb.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatal(err)
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p/100*float64(len(s)-1) + 0.5)
	return s[i]
}
