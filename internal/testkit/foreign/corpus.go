package foreign

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// Case is one store of a corpus, alone in a directory of its own.
type Case struct {
	Name string
	Dir  string
	Path string
	// Good: a store the format reads; browsing it must work. Otherwise the
	// format may refuse it (or read what it can).
	Good bool
}

// Base is a file to build cases from: Make writes it at path.
type Base struct {
	Name string
	Good bool
	Make func(t testing.TB, path string)
	// CrashSQL is the write a crashed writer made (default: Corpus's).
	CrashSQL string
}

// Copy makes a base: a file holding good's bytes.
func Copy(good []byte) func(testing.TB, string) {
	return func(t testing.TB, p string) {
		if err := os.WriteFile(p, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CopyThen makes a base: good's bytes, then sql run on them by py.
func CopyThen(py *Party, good []byte, sql string) func(testing.TB, string) {
	return func(t testing.TB, p string) {
		Copy(good)(t, p)
		py.MustExec(t, p, sql)
	}
}

// Corpus builds every combination of the bases with what can sit beside a
// store — nothing, a WAL and wal-index a crashed writer left (its last
// commit only in the WAL), the same without its -shm, garbage or empty
// -wal, -shm and -journal files — under dir. Bases of SQLite files the
// format reads should come first: crash runs crashSQL (a write the format
// accepts) through Python, which then exits without closing, on bases that
// SQLite opens. Generic refusals (empty, random, text, truncated, bad page
// size, a damaged page, SQLite without the format's tables in either
// journal mode) are added by Corpus itself from the first base.
func Corpus(t testing.TB, dir string, py *Party, crashSQL string, bases []Base) []Case {
	t.Helper()
	if len(bases) == 0 {
		t.Fatal("Corpus needs a base store")
	}
	rng := rand.New(rand.NewSource(12))
	garbage := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	write := func(b []byte) func(testing.TB, string) {
		return func(t testing.TB, p string) {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each base is made once and each crash run once; every case built
	// from them gets a copy of the files. A copy is the same bytes a
	// separate run would leave (no process holds the files once it has
	// exited), and a foreign process per case was most of the corpus's cost.
	made := func(b Base, name string) files {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, "store.sqlite")
		b.Make(t, p)
		return readFiles(t, p)
	}
	first := made(bases[0], "base-00")
	good := first[""]
	edit := func(f func([]byte) []byte) func(testing.TB, string) {
		return write(f(bytes.Clone(good)))
	}
	plain := func(journal string) func(testing.TB, string) {
		return func(t testing.TB, p string) {
			if _, err := py.Exec(p, "PRAGMA journal_mode="+journal+"; CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hello')"); err != nil {
				t.Fatal(err)
			}
		}
	}
	rollback := func(t testing.TB, p string) {
		write(good)(t, p)
		if _, err := py.Exec(p, "PRAGMA journal_mode=DELETE"); err != nil {
			t.Fatal(err)
		}
	}
	const plainCrash = "INSERT INTO notes (body) VALUES ('after the crash')"
	all := append([]Base{}, bases...)
	all = append(all,
		Base{"rollback-journal mode", bases[0].Good, rollback, ""},
		Base{"empty", false, write(nil), ""},
		Base{"random bytes", false, write(garbage(8192)), ""},
		Base{"text", false, write([]byte("hello\n")), ""},
		Base{"truncated to half", false, edit(func(b []byte) []byte { return b[:len(b)/2] }), ""},
		Base{"header only", false, edit(func(b []byte) []byte { return b[:100] }), ""},
		Base{"cut inside the header", false, edit(func(b []byte) []byte { return b[:60] }), ""},
		Base{"bad page size", false, edit(func(b []byte) []byte { binary.BigEndian.PutUint16(b[16:], 3); return b }), ""},
		Base{"a damaged page", false, edit(func(b []byte) []byte {
			ps := int(binary.BigEndian.Uint16(b[16:18]))
			for pg := 1; pg*ps < len(b); pg++ { // every page but the first
				copy(b[pg*ps:(pg+1)*ps], garbage(ps))
			}
			return b
		}), ""},
		Base{"SQLite without the format's tables (WAL)", false, plain("WAL"), plainCrash},
		Base{"SQLite without the format's tables (rollback)", false, plain("DELETE"), plainCrash},
	)
	sqliteOpens := func(name string) bool {
		switch name {
		case "empty", "random bytes", "text", "truncated to half", "header only", "cut inside the header", "bad page size", "a damaged page":
			return false
		}
		return true
	}
	// crash leaves what a writer killed mid-run does: in WAL mode a WAL
	// holding one more commit, and its -shm; in rollback mode, killed inside
	// a transaction, a hot -journal. (Nothing here holds a connection to
	// the file, so reading its header directly is safe.)
	crash := func(t testing.TB, p, crashSQL string) {
		t.Helper()
		h := make([]byte, 20)
		if f, err := os.Open(p); err == nil {
			f.Read(h)
			f.Close()
		}
		sql, left := crashSQL+"; CRASH", p+"-wal"
		if h[18] != 2 {
			sql, left = "BEGIN IMMEDIATE; "+crashSQL+"; CRASH", p+"-journal"
		}
		if _, err := py.Exec(p, sql); err != nil {
			t.Fatalf("crashed writer: %v", err)
		}
		if _, err := os.Stat(left); err != nil {
			t.Fatalf("the crashed writer left no %s: %v", filepath.Base(left), err)
		}
	}
	// A beside's then runs on a copy of the base's files, or of what the
	// crashed writer left beside the base when crash is set.
	type beside struct {
		name  string
		crash bool // needs a file SQLite opens
		then  func(t testing.TB, p string)
	}
	besides := []beside{
		{"", false, func(testing.TB, string) {}},
		{"a crashed writer's files", true, func(testing.TB, string) {}},
		{"a crashed writer's files without its -shm", true, func(t testing.TB, p string) { os.Remove(p + "-shm") }},
		{"a crashed writer's files and a garbage -shm", true, func(t testing.TB, p string) { write(garbage(32768))(t, p+"-shm") }},
		{"a crashed writer's WAL cut to its header", true, func(t testing.TB, p string) {
			if _, err := os.Stat(p + "-wal"); err == nil {
				if err := os.Truncate(p+"-wal", 32); err != nil { // a writer killed as it began: a header, no frame
					t.Fatal(err)
				}
			}
		}},
		{"a garbage -shm", false, func(t testing.TB, p string) { write(garbage(32768))(t, p+"-shm") }},
		{"a garbage -wal", false, func(t testing.TB, p string) { write(garbage(4096+32))(t, p+"-wal") }},
		{"garbage -wal and -shm", false, func(t testing.TB, p string) {
			write(garbage(8192))(t, p+"-wal")
			write(garbage(32768))(t, p+"-shm")
		}},
		{"empty -wal and -shm", false, func(t testing.TB, p string) {
			write(nil)(t, p+"-wal")
			write(nil)(t, p+"-shm")
		}},
		{"a garbage -journal", false, func(t testing.TB, p string) { write(garbage(4096))(t, p+"-journal") }},
	}
	var out []Case
	for bi, b := range all {
		base := first
		if bi > 0 {
			base = made(b, fmt.Sprintf("base-%02d", bi))
		}
		var crashed files
		if sqliteOpens(b.Name) {
			d := filepath.Join(dir, fmt.Sprintf("crash-%02d", bi))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d, "store.sqlite")
			base.write(t, p)
			crash(t, p, or(b.CrashSQL, crashSQL))
			crashed = readFiles(t, p)
		}
		for si, s := range besides {
			if s.crash && crashed == nil {
				continue
			}
			name := b.Name
			if s.name != "" {
				name += ", beside it " + s.name
			}
			d := filepath.Join(dir, fmt.Sprintf("case-%02d-%d", bi, si))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d, "store.sqlite")
			if s.crash {
				crashed.write(t, p)
			} else {
				base.write(t, p)
			}
			s.then(t, p)
			out = append(out, Case{Name: name, Dir: d, Path: p, Good: b.Good})
		}
	}
	return out
}

// files is a store's file and what lies beside it, by suffix ("" for the
// store itself, "-wal", "-shm", "-journal").
type files map[string][]byte

// readFiles reads the store at p and its side files. It opens them, so it
// must run when this process holds no SQLite connection to them.
func readFiles(t testing.TB, p string) files {
	t.Helper()
	fs := files{}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		b, err := os.ReadFile(p + suffix)
		switch {
		case err == nil:
			fs[suffix] = b
		case !os.IsNotExist(err):
			t.Fatal(err)
		}
	}
	if _, ok := fs[""]; !ok {
		t.Fatalf("%s was not made", p)
	}
	return fs
}

// write lays the files out at p.
func (fs files) write(t testing.TB, p string) {
	t.Helper()
	for suffix, b := range fs {
		if err := os.WriteFile(p+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
