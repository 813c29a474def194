package cow

import "testing"

func TestForkCopiesOnWrite(t *testing.T) {
	var a Map[string, int]
	a.Set("x", 1)
	b := a.Fork()
	if v, _ := b.Get("x"); v != 1 || b.Len() != 1 {
		t.Fatalf("fork lost the entries: %v", b.m)
	}
	b.Set("y", 2)
	b.Delete("x")
	if a.Len() != 1 || !a.Has("x") || a.Has("y") {
		t.Fatalf("writing the fork changed the original: %v", a.m)
	}
	c := b.Fork()
	c.Delete("absent") // no write, no copy
	if c.owned {
		t.Fatal("a delete of a missing key copied the map")
	}
	c.Set("z", 3)
	if b.Has("z") || !c.Has("y") {
		t.Fatalf("b %v c %v", b.m, c.m)
	}
}
