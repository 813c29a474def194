package sqlitex

import (
	"path/filepath"
	"testing"
)

// A look reads the file's own pages: a table there is sure, a table that is
// only in a WAL's commits is not seen, and then no "no" is sure either.
// Once the WAL is checkpointed away the look sees it all.
func TestLookSaysWhatItCannotSee(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sqlite3")
	db, err := OpenWrite(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA journal_mode=WAL", "CREATE TABLE a (x)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close() // the last connection: checkpointed, the WAL removed
	db, err = OpenWrite(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE b (x)"); err != nil { // in the WAL only, the connection held
		t.Fatal(err)
	}
	seen, err := Preflight{}.Look(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		has, sure bool
	}{{"a", true, true}, {"b", false, false}, {"c", false, false}} {
		if has, sure := seen.HasTable(c.name); has != c.has || sure != c.sure {
			t.Errorf("with b in the WAL: HasTable(%s) = %v, %v; want %v, %v", c.name, has, sure, c.has, c.sure)
		}
	}
	if !seen.Fits(seen.Abs) {
		t.Error("nothing was written since the look, yet it does not fit")
	}
	if _, err := db.Exec("INSERT INTO b VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if seen.Fits(seen.Abs) {
		t.Error("a commit landed since the look, yet its header still fits")
	}
	if seen.Fits(seen.Abs + "x") {
		t.Error("a look fits another path")
	}
	db.Close()
	seen, err = Preflight{}.Look(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		has, sure bool
	}{{"a", true, true}, {"b", true, true}, {"c", false, true}} {
		if has, sure := seen.HasTable(c.name); has != c.has || sure != c.sure {
			t.Errorf("checkpointed: HasTable(%s) = %v, %v; want %v, %v", c.name, has, sure, c.has, c.sure)
		}
	}
}
