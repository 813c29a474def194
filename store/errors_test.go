package store

import (
	"errors"
	"testing"
)

func TestErrorWording(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Path: "/s", Kind: ErrNotFound}, "/s: no such file"},
		{Errorf("/s", ErrNoSuchRun, nil, "%s", Because(ErrNoSuchRun, "7")), "/s: no such run: 7"},
		{Errorf("/s", ErrUnsupported, nil, "Foo database without migration %d", 2), "/s: Foo database without migration 2"},
		{Errorf("", ErrCorrupt, nil, "frame 3\nis damaged"), "frame 3 is damaged"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		if !errors.Is(c.err, c.err.Kind) {
			t.Errorf("%q does not match its kind", c.want)
		}
	}
	cause := errors.New("driver says no")
	if e := Errorf("/s", ErrIO, cause, ""); !errors.Is(e, cause) || errors.Is(e, ErrCorrupt) {
		t.Error("an Error unwraps to its cause and matches only its own kind")
	}
}
