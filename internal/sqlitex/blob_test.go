package sqlitex

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// fieldStore has python3's sqlite3 (another writer) write a WAL store whose
// row 1 holds a value of n bytes of multi-byte text, row 2 NULL and row 3
// a short one; it returns the path and the big value.
func fieldStore(t *testing.T, n int) (string, []byte) {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path := filepath.Join(t.TempDir(), "f.sqlite3")
	script := `
import sqlite3, sys
n = int(sys.argv[2])
unit = "héllo wörld ✂ 🇫🇷 \x1b[31m\r\n"
v = (unit * (n // len(unit.encode()) + 1)).encode()[:n].decode("utf-8", "ignore")
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE steps (id INTEGER PRIMARY KEY, result TEXT)")
db.execute("INSERT INTO steps VALUES (1, ?), (2, NULL), (3, 'short')", (v,))
db.commit()
sys.stdout.write(v)
`
	out, err := exec.Command("python3", "-c", script, path, itoa(n)).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return path, out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestCopyFieldReadsTheValueInPieces(t *testing.T) {
	path, want := fieldStore(t, 3*FieldPiece+12345)
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var got countingWriter
	n, size, err := CopyField(ctx, db, "steps", "result", 1, &got, -1)
	if err != nil || n != int64(len(want)) || size != int64(len(want)) || !bytes.Equal(got.b, want) {
		t.Fatalf("CopyField: %d of %d bytes, err %v, equal %v", n, size, err, bytes.Equal(got.b, want))
	}
	if got.writes < 4 {
		t.Errorf("%d writes: the value was not read a piece at a time", got.writes)
	}
	for _, limit := range []int64{0, 1, 1000, FieldPiece, FieldPiece + 1, int64(len(want)) + 10} {
		head, size, err := FieldHead(ctx, db, "steps", "result", 1, limit)
		if err != nil || size != int64(len(want)) || !bytes.Equal(head, want[:min(limit, int64(len(want)))]) {
			t.Errorf("FieldHead(%d): %d bytes of %d, err %v", limit, len(head), size, err)
		}
	}
	if head, size, err := FieldHead(ctx, db, "steps", "result", 2, 100); err != nil || size != 0 || len(head) != 0 {
		t.Errorf("NULL: %q, %d, %v", head, size, err)
	}
	if head, size, err := FieldHead(ctx, db, "steps", "result", 3, 100); err != nil || size != 5 || string(head) != "short" {
		t.Errorf("short: %q, %d, %v", head, size, err)
	}
	if _, _, err := FieldHead(ctx, db, "steps", "result", 99, 100); err == nil {
		t.Error("a missing row read without error")
	}
	// The store's other reads are not held up meanwhile: the connection is
	// let go between sessions, before their bytes are written.
	defer smallSessions()()
	var other int
	w := writerFunc(func(p []byte) (int, error) {
		return len(p), db.QueryRowContext(ctx, "SELECT count(*) FROM steps").Scan(&other)
	})
	if _, _, err := CopyField(ctx, db, "steps", "result", 1, w, -1); err != nil || other != 3 {
		t.Errorf("a read between pieces: %d rows, %v", other, err)
	}
}

// TestCopyFieldIsIncremental: the blob calls are reached on the browsing
// connection (a driver release that hides the handle falls back to loading
// values whole, and this says so).
func TestCopyFieldIsIncremental(t *testing.T) {
	path, _ := fieldStore(t, 10)
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.Raw(func(dc any) error {
		if _, ok := blobHandle(dc); !ok {
			t.Errorf("no sqlite3* handle behind %T: huge values are loaded whole", dc)
		}
		return nil
	})
}

// A value rewritten between two pieces is an error, not a splice of both.
func TestCopyFieldSeesTheValueChange(t *testing.T) {
	path, _ := fieldStore(t, 2*FieldPiece+10)
	defer smallSessions()()
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := writerFunc(func(p []byte) (int, error) {
		out, err := exec.Command("python3", "-c", `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE steps SET result = 'x' || result WHERE id = 1")
db.commit()`, path).CombinedOutput()
		if err != nil {
			t.Fatalf("python3: %v %s", err, out)
		}
		return len(p), nil
	})
	_, _, err = CopyField(context.Background(), db, "steps", "result", 1, w, -1)
	if !errors.Is(err, ErrFieldChanged) {
		t.Errorf("err = %v, want ErrFieldChanged", err)
	}
}

type countingWriter struct {
	b      []byte
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	c.b = append(c.b, p...)
	return len(p), nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

var _ io.Writer = writerFunc(nil)

// smallSessions makes every piece a read transaction of its own, until the
// function it returns is called.
func smallSessions() func() {
	was := FieldSession
	FieldSession = FieldPiece
	return func() { FieldSession = was }
}
