package watch

// Wakeup is what tells a reader its store may have changed: a file
// watcher (*Watcher), a shared tail's subscription (livetail), a remote
// agent's notices, or several stores' wakeups merged (union). Readers
// (the explorer, union, vigil tail) take any of them.
type Wakeup interface {
	C() <-chan Signal
	Ack(found bool)
	Mode() Mode
	Close() error
}

var _ Wakeup = (*Watcher)(nil)
