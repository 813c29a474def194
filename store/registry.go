package store

import (
	"os"
	"path/filepath"
	"sync"
)

// Format is a store format an adapter registers: how to recognise a path
// in it, and how to open one.
type Format struct {
	// Name is what Source.Format returns ("io-harness").
	Name string
	// Detect reports, cheaply and without writing to it, whether path is a
	// store in this format.
	Detect func(path string) bool
	// Look, when set, is Detect that also hands back what it read of the
	// file (a SQLite file's header and table names): Open passes the last
	// such to the format it opens, in Options.Seen, so that one look at a
	// file serves every format tried on it.
	Look func(path string) (claims bool, seen any)
	// Open opens path as this format, or says in a *Error why it is not.
	// Open (the package's) completes what it returns (Complete).
	Open func(path string, opts Options) (Core, error)
	// Files are the names a store of this format usually has, for a hint
	// when someone names the directory that holds one.
	Files []string
	// Explain, when set, says why a path no format detected cannot be read
	// in this format although it looks meant for it (it has the format's
	// file name, or is a directory holding such a file): a journal with a
	// torn magic, a FIFO where a run's file should be. It returns nil for a
	// path that does not look meant for the format.
	Explain func(path string) error
	// Home, when set, is where the program that writes this format keeps
	// its store on this machine (an agent CLI's session directory), read
	// from the environment it is given as that program reads it. A store
	// found there is offered when no store is named; a place that does not
	// exist is said among the places looked in.
	Home func(getenv func(string) string) []string
	// Fallback marks the format Open tries when no format detects a path,
	// so that its refusal explains what the path is not. At most one.
	Fallback bool
}

var registry struct {
	sync.RWMutex
	formats []Format
}

// Register makes a format available to Detect and Open. Adapters call it
// from init, and programs import the adapters they want (blank imports do);
// this package imports none. Formats are tried in registration order, the
// fallback last; their Detect functions should claim disjoint paths.
// Register panics on a duplicate name or a second fallback, as
// database/sql.Register does: both are programming errors.
func Register(f Format) {
	registry.Lock()
	defer registry.Unlock()
	if f.Name == "" || f.Open == nil || (f.Detect == nil && !f.Fallback) {
		panic("store: Register of an incomplete format")
	}
	for _, g := range registry.formats {
		if g.Name == f.Name {
			panic("store: Register called twice for format " + f.Name)
		}
		if g.Fallback && f.Fallback {
			panic("store: a second fallback format: " + f.Name)
		}
	}
	registry.formats = append(registry.formats, f)
}

// Formats lists the registered formats in the order Detect tries them.
func Formats() []Format {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Format, 0, len(registry.formats))
	var fallback []Format
	for _, f := range registry.formats {
		if f.Fallback {
			fallback = append(fallback, f)
		} else {
			out = append(out, f)
		}
	}
	return append(out, fallback...)
}

// Detect finds the format path is in, the fallback's own check last.
func Detect(path string) (Format, bool) {
	for _, f := range Formats() {
		if f.Detect != nil && f.Detect(path) {
			return f, true
		}
	}
	return Format{}, false
}

// Open opens path in whichever registered format detects it; a path that
// is neither a regular file nor a directory (a FIFO, a device) is refused
// before any format looks at it. A path none
// detects goes to the fallback format, which says why it cannot read it —
// except a directory that holds a store under a usual name, which is
// refused with a pointer to that file.
func Open(path string, opts Options) (Source, error) {
	// Nothing a format does may open a FIFO (it blocks until a writer
	// comes) or a device (/dev/zero reads forever): say what it is.
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, NotRegular(absPath(path), fi.Mode())
	}
	formats := Formats()
	for _, f := range formats {
		if f.Fallback {
			continue
		}
		claims := false
		if f.Look != nil {
			var seen any
			if claims, seen = f.Look(path); seen != nil {
				opts.Seen = seen
			}
		} else {
			claims = f.Detect(path)
		}
		if claims {
			return open(f, path, opts)
		}
	}
	for _, f := range formats {
		if f.Explain != nil {
			if err := f.Explain(path); err != nil {
				return nil, err
			}
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		for _, f := range formats {
			for _, name := range f.Files {
				inner := filepath.Join(path, name)
				if fi, err := os.Stat(inner); err == nil && fi.Mode().IsRegular() {
					return nil, Errorf(absPath(path), ErrIsDirectory, nil, "%s (did you mean %s?)", ErrIsDirectory, inner)
				}
			}
		}
	}
	for _, f := range formats {
		if f.Fallback {
			return open(f, path, opts)
		}
	}
	return nil, Errorf(absPath(path), ErrNotAStore, nil, "")
}

// open opens path as f, completed into a Source.
func open(f Format, path string, opts Options) (Source, error) {
	c, err := f.Open(path, opts)
	if err != nil {
		return nil, err
	}
	return Complete(c), nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
