// Package schema is what io-harness's reader (store/ioharness) and the Go
// twin of its writer (store/ioharness/harness) must agree on about a store:
// the schema io-harness 0.66 creates (schema.sql) and the user_version it
// stamps, which tables and columns a given store has, and how shared columns
// are written and read back: time stamps, ids, lease rows, memory rows. Both
// sides import it; neither imports the other.
package schema
