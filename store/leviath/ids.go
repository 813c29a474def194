package leviath

import "hash/fnv"

// Ids of rows, samples and provider calls are derived from the journal, so
// that every process reading the same bytes gives the same ids: vigil
// agent started for a new link resumes a cursor another agent gave out
// (store.CursorCodec), and the reader's rows keep their keys.
//
//	id = prefix<<32 | local
//
// prefix is 31 bits of the run id's FNV-1a hash (a store that holds two
// runs of one hash moves the later one on, in the order runs are listed;
// a written cursor carries each run's prefix, so another process that
// numbered them otherwise answers Reset). local is, for samples and
// calls, their ordinal in the run (one per frame at most, in file order);
// for rows, rowSlots × the ordinal of the row among the rows every read
// of the same bytes gives, plus a slot for the two journal notes whose
// presence depends on when the journal was read (a damaged frame seen
// before its restart was written, or with it).
const rowSlots = 4

// Slots of the timing-dependent journal notes.
const (
	slotDamaged = 1 // "the frame at byte N is damaged"
	slotResumed = 2 // "bytes N to M are a frame a crash tore; reading resumes"
	slotTorn    = 3 // "the last frame is torn and its writer is gone"
)

func (rs *runState) id64(local int64) int64 { return rs.prefix<<32 | local&(1<<32-1) }

// hashPrefix is the prefix a run id hashes to (never 0).
func hashPrefix(id string) int64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	p := int64(h.Sum32() & (1<<31 - 1))
	if p == 0 {
		p = 1
	}
	return p
}

// idPrefix gives a run its prefix: its hash, or the next free one when
// another run of this store has it. A run read again keeps its own.
func (s *Store) idPrefix(id string) int64 {
	if p, ok := s.prefixOf[id]; ok {
		return p
	}
	p := hashPrefix(id)
	for s.prefixTaken[p] {
		if p++; p >= 1<<31 {
			p = 1
		}
	}
	s.prefixTaken[p], s.prefixOf[id] = true, p
	return p
}
