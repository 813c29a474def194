package leviath

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/vigil-run/vigil/store"
)

// watchedNames are the files whose events mean new data: the journal, the
// meta (replaced by rename), and the interaction sidecar (appears while a
// run waits). context.json, stages.json and the logs change too but add
// nothing vigil shows.
var watchedNames = []string{"run.lvr", "meta.json", "interactions.json"}

// Watch is the runs directory in directory mode (the watcher adds run
// directories as they appear) with a stat-based Version.
func (s *Store) Watch() store.WatchSpec {
	return store.WatchSpec{Path: s.root, Names: watchedNames, Version: s.version}
}

// version hashes what a refresh would notice: the run directories and, in
// each, the size, mtime and inode of the watched files. It moves as soon as
// appended bytes are on disk (an incomplete frame costs one empty refresh)
// and touches no state of the Store, so the watcher may call it at any time.
func (s *Store) version() (uint64, error) {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return 0, statErr(s.root, err)
	}
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	for _, e := range ents {
		if !isDirEntry(s.root, e) {
			continue
		}
		h.Write([]byte(e.Name()))
		for _, n := range watchedNames {
			fi, err := os.Stat(filepath.Join(s.root, e.Name(), n))
			if err != nil {
				put(0)
				continue
			}
			put(uint64(fi.Size()))
			put(uint64(fi.ModTime().UnixNano()))
			put(inodeOf(fi))
		}
	}
	return h.Sum64(), nil
}
