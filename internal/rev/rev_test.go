package rev

import "testing"

func TestEveryBumpIsANewRevision(t *testing.T) {
	var a, b Rev
	seen := map[uint64]bool{0: true}
	for range 3 {
		for _, r := range []*Rev{&a, &b} {
			r.Bump()
			if seen[r.Rev()] {
				t.Fatalf("revision %d handed out twice", r.Rev())
			}
			seen[r.Rev()] = true
		}
	}
}

func TestSeenSaysWhenARevisionMoved(t *testing.T) {
	var s Seen
	var r Rev
	r.Bump()
	if !s.Moved(r.Rev()) {
		t.Fatal("a first revision is not seen as moved")
	}
	if s.Moved(r.Rev()) {
		t.Fatal("the same revision is seen as moved")
	}
	r = Rev{} // replaced: back to zero is a move too
	if !s.Moved(r.Rev()) {
		t.Fatal("a holder replaced by a fresh one is not seen as moved")
	}
}
