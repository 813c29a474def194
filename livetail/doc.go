// Package livetail follows one store for many readers at once: one file
// watcher and one Changes stream whose batches are kept in a log, each
// reader's cursor a position in it, and reads that every reader makes
// after a commit made once per log position (Shared).
//
// It is its own package, below the explorer (tui), the SSH UI server
// (serve) and the store backends, because two of them run it: vigil serve
// shares one Hub among its sessions, and the ssh agent (remote) tails its
// store through one and sends its log to the reader on the other end. A
// store backend must not import a UI to get it. It imports only the
// store contract and watch.
package livetail
