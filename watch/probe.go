package watch

import (
	"encoding/binary"
	"hash"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// maxNamed bounds the paths kept for Touched: past it the next probe is
// whole.
const maxNamed = 1024

// note keeps a path an event named, for Touched.
func (w *Watcher) note(name string) {
	if w.opts.Touched == nil || w.namedLost {
		return
	}
	if len(w.named) >= maxNamed {
		w.lostNames()
		return
	}
	if w.named == nil {
		w.named = map[string]struct{}{}
	}
	w.named[name] = struct{}{}
}

// lostNames: events may have been missed; the next probe looks at all.
func (w *Watcher) lostNames() { w.named, w.namedLost = nil, true }

// probeNamed is the probe after events: Touched with what they named, when
// nothing may have been missed; else the whole probe.
func (w *Watcher) probeNamed() probeValue {
	if w.opts.Touched == nil || w.opts.Version == nil || w.namedLost || w.Mode() != Push {
		return w.probe()
	}
	named := slices.Sorted(maps.Keys(w.named))
	w.named = nil
	w.nProbes.Add(1)
	v, err := w.opts.Touched(named)
	if err != nil {
		return probeValue{err: true}
	}
	return probeValue{v: v}
}

// probe calls Version, or the stat-based default: it looks at everything,
// so what events named so far is covered.
func (w *Watcher) probe() probeValue {
	w.named, w.namedLost = nil, false
	w.nProbes.Add(1)
	if w.opts.Version != nil {
		v, err := w.opts.Version()
		if err != nil {
			return probeValue{err: true}
		}
		return probeValue{v: v}
	}
	return probeValue{v: w.statProbe()}
}

// statProbe hashes name, size, mtime and inode of the watched files. It only
// stats; it never opens the data.
func (w *Watcher) statProbe() uint64 {
	h := fnv.New64a()
	if !w.dirMode {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range w.names {
				if !yield(n) {
					return
				}
			}
		})
		for _, n := range names {
			fi, err := os.Stat(filepath.Join(w.dir, n))
			hashEntry(h, n, fi, err)
		}
		return h.Sum64()
	}
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		h.Write([]byte("error"))
		return h.Sum64()
	}
	for _, e := range ents {
		p := filepath.Join(w.dir, e.Name())
		if e.IsDir() {
			hashEntry(h, e.Name()+"/", nil, nil)
			sub, err := os.ReadDir(p)
			if err != nil {
				continue
			}
			for _, f := range sub {
				if f.IsDir() || !w.nameOK(f.Name()) {
					continue
				}
				fi, err := f.Info()
				hashEntry(h, e.Name()+"/"+f.Name(), fi, err)
			}
			continue
		}
		if w.nameOK(e.Name()) {
			fi, err := e.Info()
			hashEntry(h, e.Name(), fi, err)
		}
	}
	return h.Sum64()
}

func hashEntry(h hash.Hash64, name string, fi os.FileInfo, err error) {
	h.Write([]byte(name))
	var b [8 * 3]byte
	if err == nil && fi != nil {
		binary.LittleEndian.PutUint64(b[0:], uint64(fi.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(fi.ModTime().UnixNano()))
		binary.LittleEndian.PutUint64(b[16:], inode(fi))
	} else if err != nil {
		b[0] = 0xff
	}
	h.Write(b[:])
}
