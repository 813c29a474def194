package tui

import (
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/watch"
)

// A store emptied in place under the open explorer (truncate: the same
// file, no rename) is not current for the reason the open gives, "the
// file is empty", not the driver's words for a query on a database
// without tables (it said "cannot read store: sql: no rows in result
// set"); written again, it is read again.
func TestStoreEmptiedInPlaceSaysSo(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	saved := path + ".saved"
	shell(t, "cp", path, saved)
	d := reopenDriver(t, path)
	d.contains("Coordinate the v2.0 release")
	d.lacks("NOT CURRENT")

	shell(t, "truncate", "-s", "0", path)
	d.signal(watch.Changed, "")
	d.contains("NOT CURRENT", "cannot read the store")
	if why := d.m.NotCurrent(); !strings.Contains(why, "the file is empty") || strings.Contains(why, "sql:") {
		t.Errorf("not current because %q: want the reason the open gives (the file is empty)", why)
	}

	shell(t, "cp", saved, path)
	d.signal(watch.Changed, "")
	d.retry()
	d.contains("Coordinate the v2.0 release")
	d.lacks("NOT CURRENT", "the file is empty")
}
