package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSource is enough of a Source to tell which format opened a path.
type fakeSource struct {
	Source
	format string
}

func (f fakeSource) Format() string { return f.format }

func opener(name string) func(string, Options) (Core, error) {
	return func(string, Options) (Core, error) { return fakeSource{format: name}, nil }
}

// The registry is process-wide: this test registers its formats once and
// restores the list when it is done.
func TestRegistry(t *testing.T) {
	saved := registry.formats
	registry.formats = nil
	t.Cleanup(func() { registry.formats = saved })

	dir := t.TempDir()
	journal := filepath.Join(dir, "j.journal")
	os.WriteFile(journal, []byte("J"), 0o644)
	Register(Format{Name: "fallback", Open: opener("fallback"), Fallback: true, Detect: func(p string) bool { return strings.HasSuffix(p, ".db") },
		Files: []string{"runs.db"}})
	Register(Format{Name: "journal", Open: opener("journal"), Detect: func(p string) bool { return strings.HasSuffix(p, ".journal") }})

	if fs := Formats(); len(fs) != 2 || fs[0].Name != "journal" || fs[1].Name != "fallback" {
		t.Fatalf("formats in order %v: the fallback comes last", fs)
	}
	for path, want := range map[string]string{journal: "journal", filepath.Join(dir, "x.db"): "fallback", filepath.Join(dir, "x.txt"): "fallback"} {
		src, err := Open(path, Options{})
		if err != nil || src.Format() != want {
			t.Errorf("Open(%s) = %v, %v; want the %s format", path, src, err, want)
		}
	}
	if f, ok := Detect(filepath.Join(dir, "x.db")); !ok || f.Name != "fallback" {
		t.Errorf("Detect asks the fallback too: %v %v", f.Name, ok)
	}
	if _, ok := Detect(filepath.Join(dir, "x.txt")); ok {
		t.Error("Detect claimed a path no format claims")
	}

	// A directory that holds a store under a usual name points at it.
	os.WriteFile(filepath.Join(dir, "runs.db"), []byte("x"), 0o644)
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrIsDirectory) || !strings.Contains(err.Error(), "did you mean "+filepath.Join(dir, "runs.db")) {
		t.Errorf("Open(dir) = %v", err)
	}

	for _, f := range []Format{
		{Name: "journal", Open: opener("x"), Detect: func(string) bool { return false }},
		{Name: "second fallback", Open: opener("x"), Fallback: true},
		{Name: "no detect", Open: opener("x")},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", f.Name)
				}
			}()
			Register(f)
		}()
	}
}

// What a format's Look read reaches the format Open opens, the fallback
// included, so that one look at a file serves every format tried on it.
func TestLookReachesTheFormatOpened(t *testing.T) {
	saved := registry.formats
	registry.formats = nil
	t.Cleanup(func() { registry.formats = saved })
	var got []any
	record := func(name string) func(string, Options) (Core, error) {
		return func(_ string, o Options) (Core, error) {
			got = append(got, o.Seen)
			return fakeSource{format: name}, nil
		}
	}
	Register(Format{Name: "fallback", Open: record("fallback"), Fallback: true})
	Register(Format{Name: "looks", Open: record("looks"), Detect: func(string) bool { panic("Open asks Look") },
		Look: func(p string) (bool, any) { return strings.HasSuffix(p, ".mine"), "seen " + filepath.Base(p) }})
	for path, want := range map[string]string{"a.mine": "looks", "b.other": "fallback"} {
		got = nil
		src, err := Open(filepath.Join(t.TempDir(), path), Options{})
		if err != nil || src.Format() != want {
			t.Fatalf("Open(%s) = %v, %v", path, src, err)
		}
		if len(got) != 1 || got[0] != "seen "+path {
			t.Errorf("Open(%s): the format opened was handed %v", path, got)
		}
	}
}
