package sqlitex

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// ScanField hands over the whole value python3 wrote, in pieces, in as
// many sessions as FieldHold allows; NULL is empty and a missing row an
// error.
func TestScanFieldReadsTheWholeValue(t *testing.T) {
	path, want := fieldStore(t, 3*FieldPiece+12345)
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	defer smallSessions()() // a session's floor is one piece, and what came before it
	for _, hold := range []time.Duration{time.Hour, time.Nanosecond} {
		was := FieldHold
		FieldHold = hold
		var got []byte
		pieces := 0
		size, err := ScanField(ctx, db, "steps", "result", 1, func(p []byte) error {
			pieces++
			got = append(got, p...)
			return nil
		})
		FieldHold = was
		if err != nil || size != int64(len(want)) || !bytes.Equal(got, want) {
			t.Fatalf("hold %v: %d of %d bytes, err %v, equal %v", hold, len(got), size, err, bytes.Equal(got, want))
		}
		if pieces < 4 {
			t.Errorf("hold %v: %d pieces: the value was not read a piece at a time", hold, pieces)
		}
	}
	if size, err := ScanField(ctx, db, "steps", "result", 2, func([]byte) error { t.Error("NULL has bytes"); return nil }); err != nil || size != 0 {
		t.Errorf("NULL: %d, %v", size, err)
	}
	if _, err := ScanField(ctx, db, "steps", "result", 99, func([]byte) error { return nil }); err == nil {
		t.Error("a missing row read without error")
	}
	stop := errors.New("enough")
	if _, err := ScanField(ctx, db, "steps", "result", 1, func([]byte) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
}

// A value python3 rewrites between two sessions is an error, not a splice.
func TestScanFieldSeesTheValueChange(t *testing.T) {
	path, _ := fieldStore(t, 2*FieldPiece+10)
	was := FieldHold
	FieldHold = time.Nanosecond // the first session is one piece
	defer func() { FieldHold = was }()
	defer smallSessions()()
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wrote := false
	_, err = ScanField(context.Background(), db, "steps", "result", 1, func(p []byte) error {
		if wrote {
			return nil
		}
		wrote = true
		out, err := exec.Command("python3", "-c", `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE steps SET result = 'x' || result WHERE id = 1")
db.commit()`, path).CombinedOutput()
		if err != nil {
			t.Fatalf("python3: %v %s", err, out)
		}
		return nil
	})
	if !errors.Is(err, ErrFieldChanged) {
		t.Errorf("err = %v, want ErrFieldChanged", err)
	}
}
