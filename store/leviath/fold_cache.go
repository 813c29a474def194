package leviath

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
)

// The fold cache: a summary of a long journal's fold, kept in vigil's own
// user cache directory (os.UserCacheDir()/vigil/leviath-folds, never
// beside the store), so that the next process folds only what was
// appended since. A 1 GB journal is a second of reading; its summary is a
// few hundred KB.
//
// A file holds one journal's foldState up to an offset, keyed by the
// journal's path, device and inode, with a fingerprint of the bytes it
// covers. It is used only when all of these still hold:
//
//   - the journal has the same path, device and inode, and the run its id;
//   - it is at least as long as the offset;
//   - every byte before the offset hashes as it did (XXH3-64, made while
//     the fold that wrote the summary read them: fold_hash.go);
//   - if it is exactly as long as when the summary was written, its mtime
//     is the same too (a journal only grows: same size and another mtime
//     is a rewrite in place).
//
// Otherwise, or when the file is damaged, of another version or
// another program's, it is ignored (VIGIL_DEBUG=1 prints the one reason, and
// a summary used, how much it covered)
// and the journal folded from its start. Nothing is written when the cache
// directory cannot be made or written; the user sees no difference but the
// time.

// foldCacheMagic starts every cache file; foldCacheVersion is the format
// (the header below and foldState's fields). Bump it on any change.
const (
	foldCacheMagic   = "vigil leviath fold\n"
	foldCacheVersion = 3
)

// foldCacheBytes is the journal size from which the cache is read, and the
// number of bytes a fold must have read past the cached offset before it
// writes a new summary (tests lower it).
var foldCacheBytes int64 = 16 << 20

// foldCacheRoot is the cache directory ("" when there is none).
var foldCacheRoot = func() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "vigil", "leviath-folds")
}

// foldCacheDebug says, when VIGIL_DEBUG is set, how a long journal's
// fold began: from a summary, or from the start and why.
var foldCacheDebug = func(path, what string) {
	if os.Getenv("VIGIL_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "vigil: fold cache: %s: %s\n", path, what)
	}
}

// cacheHeader is what identifies the journal a summary was made of.
type cacheHeader struct {
	Version int
	Path    string
	Dev     uint64
	Ino     uint64
	RunID   string
	Off     int64  // the summary covers [0, Off)
	Print   uint64 // XXH3-64 of those bytes, every one
	Size    int64  // the journal's size when written
	MTime   int64  // and its mtime (ns)
}

// cacheFile is where the summary of the journal at path (dev, ino) lives.
func cacheFile(root, path string, dev, ino uint64) string {
	h := xxhash.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d", path, dev, ino)
	return filepath.Join(root, strconv.FormatUint(h.Sum64(), 16)+".fold")
}

// loadFold reads the summary of the journal f (at path, of run id), checked
// against its header (path, inode, run, size and mtime) but not yet against
// the bytes it covers, or says why there is none to use ("" when there
// simply is none). verifyFold makes that check: a summary the caller does
// not use (a long tail left to the background fold) is never hashed.
func loadFold(path, id string, f *os.File) (*foldCandidate, string) {
	root := foldCacheRoot()
	fi, err := f.Stat()
	if root == "" || err != nil || inodeOf(fi) == 0 {
		return nil, ""
	}
	dev, ino := deviceOf(fi), inodeOf(fi)
	cf, err := openFile(cacheFile(root, path, dev, ino))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, "" // none (or no cache directory) yet
		}
		return nil, "cannot open the cache file: " + err.Error()
	}
	defer cf.Close()
	b, err := io.ReadAll(io.LimitReader(cf, 256<<20))
	if err != nil {
		return nil, "cannot read the cache file: " + err.Error()
	}
	hd, fs, why := decodeFold(b)
	if why != "" {
		return nil, why
	}
	switch {
	case hd.Path != path || hd.Dev != dev || hd.Ino != ino || hd.RunID != id:
		return nil, "it is another journal's"
	case fi.Size() < hd.Off:
		return nil, fmt.Sprintf("the journal is shorter (%d bytes) than the %d it covers", fi.Size(), hd.Off)
	case fi.Size() == hd.Size && fi.ModTime().UnixNano() != hd.MTime:
		return nil, "the journal was written over in place (same size, another mtime)"
	}
	if why := fs.check(fi.Size()); why != "" {
		return nil, "it does not hold together: " + why
	}
	return &foldCandidate{fs: fs, hd: hd, file: cf.Name()}, ""
}

// foldCandidate is a summary loadFold read, not yet checked against the
// journal's bytes.
type foldCandidate struct {
	fs   *foldState
	hd   *cacheHeader
	file string
}

// foldVerifies counts verifyFold's hashings (tests: a summary is hashed
// once per open).
var foldVerifies atomic.Int64

// verifyFold hashes the journal's bytes the summary covers and gives the
// summary and that hash to go on with, or says why it is not to be used.
func (c *foldCandidate) verifyFold(f *os.File) (*foldState, *foldHash, string) {
	foldVerifies.Add(1)
	h, ok := hashJournalTo(f, c.hd.Off)
	if !ok || h.d.Sum64() != c.hd.Print {
		return nil, nil, "the journal's bytes under it changed"
	}
	now := time.Now()
	os.Chtimes(c.file, now, now) // used: kept by pruneFolds
	return c.fs, h, ""
}

// decodeFold splits a cache file into its header and state: magic,
// a u64 length and xxhash64 of the body, the body (gob: header, state).
func decodeFold(b []byte) (*cacheHeader, *foldState, string) {
	if !bytes.HasPrefix(b, []byte(foldCacheMagic)) {
		return nil, nil, "not a vigil fold cache file"
	}
	b = b[len(foldCacheMagic):]
	if len(b) < 16 {
		return nil, nil, "the cache file is cut short"
	}
	n, sum, body := binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), b[16:]
	if uint64(len(body)) != n || xxhash.Sum64(body) != sum {
		return nil, nil, "the cache file is damaged (its checksum does not match)"
	}
	dec := gob.NewDecoder(bytes.NewReader(body))
	var hd cacheHeader
	if err := dec.Decode(&hd); err != nil {
		return nil, nil, "the cache file's header does not decode: " + err.Error()
	}
	if hd.Version != foldCacheVersion {
		return nil, nil, fmt.Sprintf("the cache file is format %d, this vigil writes %d", hd.Version, foldCacheVersion)
	}
	var fs foldState
	if err := dec.Decode(&fs); err != nil {
		return nil, nil, "the cache file's state does not decode: " + err.Error()
	}
	if fs.Off != hd.Off {
		return nil, nil, "the cache file's header and state disagree"
	}
	return &hd, &fs, ""
}

// saveFold writes rs's fold of the journal f (at path) down, replacing the
// summary before it (a new file renamed into place: a reader sees the old
// summary or the new, whole). Any failure leaves the cache as it was.
func saveFold(path string, rs *runState, f *os.File, hash *foldHash) {
	root := foldCacheRoot()
	fi, err := f.Stat()
	if root == "" || err != nil || inodeOf(fi) == 0 || rs.off < preambleLen {
		return
	}
	p, ok := hash.sumTo(f, rs.off)
	if !ok {
		return
	}
	hd := cacheHeader{Version: foldCacheVersion, Path: path, Dev: deviceOf(fi), Ino: inodeOf(fi), RunID: rs.id,
		Off: rs.off, Print: p, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	b := encodeFold(&hd, foldStateOf(rs))
	if b == nil {
		return
	}
	if os.MkdirAll(root, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(root, ".fold-*")
	if err != nil {
		return // an unwritable cache directory: the next process folds again
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), cacheFile(root, path, hd.Dev, hd.Ino))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return
	}
	pruneFolds(root, time.Now())
}

// The cache is kept small: a summary not used or written for
// foldCacheMaxAge goes, and past foldCacheMaxFiles the least recently used
// go (a use touches its file), as does a half-written file a killed
// process left.
const (
	foldCacheMaxAge   = 30 * 24 * time.Hour
	foldCacheMaxFiles = 256
)

func pruneFolds(root string, now time.Time) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type kept struct {
		name string
		at   time.Time
	}
	var folds []kept
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		name, at := e.Name(), fi.ModTime()
		switch {
		case strings.HasPrefix(name, ".fold-") && now.Sub(at) > time.Hour,
			strings.HasSuffix(name, ".fold") && now.Sub(at) > foldCacheMaxAge:
			os.Remove(filepath.Join(root, name))
		case strings.HasSuffix(name, ".fold"):
			folds = append(folds, kept{name, at})
		}
	}
	if len(folds) <= foldCacheMaxFiles {
		return
	}
	sort.Slice(folds, func(i, j int) bool { return folds[i].at.After(folds[j].at) })
	for _, k := range folds[foldCacheMaxFiles:] {
		os.Remove(filepath.Join(root, k.name))
	}
}

// encodeFold is a cache file's bytes (nil if they cannot be made).
func encodeFold(hd *cacheHeader, fs *foldState) []byte {
	var body bytes.Buffer
	enc := gob.NewEncoder(&body)
	if enc.Encode(hd) != nil || enc.Encode(fs) != nil {
		return nil
	}
	out := make([]byte, 0, len(foldCacheMagic)+16+body.Len())
	out = append(out, foldCacheMagic...)
	out = binary.BigEndian.AppendUint64(out, uint64(body.Len()))
	out = binary.BigEndian.AppendUint64(out, xxhash.Sum64(body.Bytes()))
	return append(out, body.Bytes()...)
}
