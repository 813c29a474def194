package sqlitex

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigil-run/vigil/internal/heldfiles"
)

// This process's SQLite connections, by the inode of their database file.
//
// SQLite's unix VFS shares one wal-index (-shm) mapping between all the
// connections a process has to a database, opened by whichever connection
// came first and in that connection's way. A browsing connection opened
// with readonly_shm=1 (so that it never rewrites a -shm nobody else holds)
// makes that mapping read-only for the whole process, and a read-write
// connection opened beside it would fail every write with SQLITE_READONLY.
// So every connection sqlitex opens registers here:
//
//   - a browsing connection uses readonly_shm only while no read-write
//     connection of this process has the file open and no other process
//     holds it (then the -shm is live, and attaching to it rewrites nothing);
//   - a read-write connection, before it opens, has this process's browsing
//     connections on the file let go, and holds new ones back until it is
//     open: they then reopen sharing its read-write mapping.
//
// Connections a program opens on the same file without sqlitex are not
// seen here; vigil opens none.
type inodeKey struct{ dev, ino uint64 }

type onInode struct {
	writers int                // read-write connections open
	opening bool               // a read-write connection is opening: browsing ones wait
	roOpen  int                // browsing connections open with readonly_shm
	tainted map[*reader]int    // browsing connections, per reader, whose -shm mapping may be read-only
	evicted map[*reader]uint64 // a reader's connections numbered below this must go
}

var held = struct {
	sync.Mutex
	cond *sync.Cond
	m    map[inodeKey]*onInode
}{m: map[inodeKey]*onInode{}}

func init() { held.cond = sync.NewCond(&held.Mutex) }

func keyOf(f files) inodeKey { return inodeKey{f.dev, f.ino} }

func inodeOf(abs string) (inodeKey, bool) {
	var st syscall.Stat_t
	if syscall.Stat(abs, &st) != nil {
		return inodeKey{}, false
	}
	return inodeKey{uint64(st.Dev), uint64(st.Ino)}, true
}

// heldOn is k's entry; the caller holds held.
func heldOn(k inodeKey) *onInode {
	o := held.m[k]
	if o == nil {
		o = &onInode{tainted: map[*reader]int{}, evicted: map[*reader]uint64{}}
		held.m[k] = o
	}
	return o
}

func forget(k inodeKey, o *onInode) {
	if o.writers == 0 && !o.opening && len(o.tainted) == 0 {
		delete(held.m, k)
	}
}

// evictWait bounds how long a read-write connection waits for browsing
// connections to let go (each finishes the short read it is in).
const evictWait = 5 * time.Second

// writerOpening registers a read-write connection about to open k. If a
// browsing connection of this process may have mapped the file's -shm
// read-only, those connections are closed first (one in the middle of a
// read when it finishes it) and new ones wait meanwhile, then open sharing
// the writer's mapping. done unregisters the connection when it closes.
func writerOpening(k inodeKey) (done func()) {
	held.Lock()
	o := heldOn(k)
	o.writers++
	var readers []*reader
	if len(o.tainted) > 0 {
		o.opening = true
		for r := range o.tainted {
			readers = append(readers, r)
			o.evicted[r] = r.seq.Load() + 1
		}
	}
	held.Unlock()
	if len(readers) > 0 {
		for _, r := range readers {
			r.dropIdle()
		}
		deadline := time.Now().Add(evictWait)
		for {
			held.Lock()
			n := len(o.tainted)
			if n == 0 || time.Now().After(deadline) {
				o.opening = false
				held.cond.Broadcast()
				held.Unlock()
				break
			}
			held.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			held.Lock()
			o.writers--
			forget(k, o)
			held.Unlock()
		})
	}
}

// readerOpening registers a browsing connection of r that maps k's -shm,
// once no read-write connection is opening there, and says whether it may
// open -shm read-only. A connection that does, or that opens while one that
// did is open (it then shares that read-only mapping), is one a writer must
// wait out. done unregisters it when it closes (or fails to open).
func readerOpening(k inodeKey, shm string, r *reader) (roShm bool, done func()) {
	held.Lock()
	defer held.Unlock()
	o := heldOn(k)
	for o.opening {
		held.cond.Wait()
	}
	roShm = o.writers == 0 && !otherProcessLocks(shm)
	tainted := roShm || o.roOpen > 0
	if roShm {
		o.roOpen++
	}
	if tainted {
		o.tainted[r]++
	}
	var once sync.Once
	return roShm, func() {
		once.Do(func() {
			held.Lock()
			defer held.Unlock()
			if roShm {
				o.roOpen--
			}
			if tainted {
				if o.tainted[r]--; o.tainted[r] <= 0 {
					delete(o.tainted, r)
					delete(o.evicted, r)
				}
			}
			forget(k, o)
		})
	}
}

// evictedBelow is the connection number below which r's connections on k
// must be replaced (0: none).
func evictedBelow(k inodeKey, r *reader) uint64 {
	held.Lock()
	defer held.Unlock()
	if o := held.m[k]; o != nil {
		return o.evicted[r]
	}
	return 0
}

// otherProcessLocks reports whether another process holds a lock on the
// file at p (on -shm: a live SQLite connection, which keeps the wal-index
// in order). It reads /proc/locks, which names files by device and inode,
// so it opens nothing beside the store. Where there is no /proc/locks it
// answers yes, the safe answer: a reader then attaches to the -shm as any
// SQLite reader does.
func otherProcessLocks(p string) bool {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return true
	}
	defer f.Close()
	me := os.Getpid()
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: POSIX  ADVISORY  READ 21013 fe:00:9994262 128 128"; a waiter
		// ("1: -> POSIX …") holds nothing.
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[1] == "->" {
			continue
		}
		id := strings.Split(fs[5], ":")
		if len(id) != 3 {
			continue
		}
		ma, err1 := strconv.ParseUint(id[0], 16, 64)
		mi, err2 := strconv.ParseUint(id[1], 16, 64)
		ino, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ma != major || mi != minor || ino != uint64(st.Ino) {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err != nil || pid != me {
			return true // another process (an OFD lock says -1: not ours)
		}
	}
	return sc.Err() != nil
}

// heldWhile counts a connection just opened to the file at abs in
// heldfiles, for code that opens files with the os; the func it returns
// runs done and takes the count back.
func heldWhile(abs string, done func()) func() {
	release := heldfiles.HoldPath(abs)
	return func() {
		done()
		release()
	}
}
