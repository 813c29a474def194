package leviath

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

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
// and takes no lock of the Store, so the watcher may call it at any time.
//
// The watcher calls it every second as a safety net under file events, so
// its cost is what an idle explorer costs. The files of a run in a
// terminal status (publishEnded) are not stat'ed: Leviath writes nothing
// more to it, and file events still report a change. Its directory is, by
// name: a run directory removed or added moves the version. The runs
// directory is listed again only when its mtime moved (runDirNames), and
// which runs are live is worked out again only when the listing or the
// ended set is replaced (planFor).
func (s *Store) version() (uint64, error) {
	names, err := s.runDirNames()
	if err != nil {
		return 0, err
	}
	plan := s.planFor(names, s.ended.Load())
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	put(plan.namesSum)
	for _, name := range plan.live {
		h.Write([]byte(name))
		for _, n := range watchedNames {
			fi, err := os.Stat(filepath.Join(s.root, name, n))
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

// dirListing is the runs directory's run directories as last listed, with
// the directory's mtime and inode then and when the listing began.
type dirListing struct {
	names []string
	mtime time.Time
	ino   uint64
	at    time.Time
}

// runDirNames lists the run directories, or gives the last listing again
// when the directory is the same one and its mtime (which an entry added,
// removed or renamed moves) is the one seen then, older than that listing
// by more than a timestamp's granularity.
func (s *Store) runDirNames() ([]string, error) {
	fi, err := os.Stat(s.root)
	if err != nil {
		return nil, statErr(s.root, err)
	}
	if l := s.listing.Load(); l != nil && l.ino == inodeOf(fi) && l.mtime.Equal(fi.ModTime()) && l.at.Sub(l.mtime) > 2*time.Second {
		return l.names, nil
	}
	began := time.Now()
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return nil, statErr(s.root, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if isDirEntry(s.root, e) {
			names = append(names, e.Name())
		}
	}
	s.listing.Store(&dirListing{names: names, mtime: fi.ModTime(), ino: inodeOf(fi), at: began})
	return names, nil
}
