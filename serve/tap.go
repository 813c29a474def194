package serve

import "time"

// frameTap, when set, is told of every write a session's own screen has
// finished (draw's bytes, once the SSH channel took them) and of the
// screen's end. Only a build with -tags vigiltrace sets it (tap_trace.go):
// the load bench times a commit to the frame's last byte on the server's
// socket as well as to the client's screen, so that what the server does
// is told from how soon fifty client emulators on the same cores read it.
var frameTap interface {
	wrote(s *lineScreen, at time.Time, b string)
	ended(s *lineScreen)
}
