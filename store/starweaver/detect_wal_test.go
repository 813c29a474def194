package starweaver

import (
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Detection answers from the header's look at the file's own pages; a
// Starweaver database whose migrations are still only in its WAL (the
// writer has it open, nothing is checkpointed) must not be taken for an
// io-harness store because that look cannot see them.
func TestDetectWhileTheSchemaIsInTheWAL(t *testing.T) {
	p := filepath.Join(t.TempDir(), "starweaver.sqlite")
	f := newDB(t, p, false)
	defer f.close()
	seen, err := preflight.Look(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, sure := seen.HasTable(migrationsTable); sure {
		t.Fatal("the migrations are in the file's own pages: this test needs them in the WAL only")
	}
	if !Detect(p) {
		t.Error("Detect: false for a Starweaver database whose schema is in its WAL")
	}
	src, err := store.Open(p, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Format() != Format {
		t.Errorf("store.Open took it as %s", src.Format())
	}
}

// Once checkpointed, the look alone says Starweaver, and the store opened
// takes its header from that look.
func TestDetectFromTheLook(t *testing.T) {
	p := buildV07(t, t.TempDir())
	seen, err := preflight.Look(p)
	if err != nil {
		t.Fatal(err)
	}
	if has, sure := seen.HasTable(migrationsTable); !has || !sure {
		t.Fatalf("HasTable = %v, %v on a checkpointed Starweaver file", has, sure)
	}
	ok, hint := look(p)
	if s, _ := hint.(*sqlitex.Seen); !ok || s == nil || !s.Fits(s.Abs) {
		t.Fatalf("look = %v, %v", ok, hint)
	}
	src, err := store.Open(p, store.Options{ReadOnly: true})
	if err != nil || src.Format() != Format {
		t.Fatalf("store.Open = %v, %v", src, err)
	}
	src.Close()
}
