package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vigil-run/vigil/remote"
)

// storeIdentity is what names one store however it is spelled: the device
// and inode of the file or directory when it exists (so ./a, /abs/a, a
// symlink and a hard link to it are one store), its absolute path when it
// does not, and an ssh:// target as parsed. It only stats: a store this
// process may hold through SQLite is never opened by the OS.
func (a *app) storeIdentity(name string) string {
	if remote.IsURL(name) {
		if t, err := remote.ParseTarget(name); err == nil {
			return "ssh " + t.String()
		}
		return name
	}
	p := a.expandHome(name)
	var st syscall.Stat_t
	if syscall.Stat(p, &st) == nil {
		return fmt.Sprintf("inode %d:%d", st.Dev, st.Ino)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return filepath.Clean(abs)
	}
	return p
}

// namedTwice says, as a usage error, that name is a store already named
// (seen maps each identity to the first name that gave it), or records it.
func (a *app) namedTwice(seen map[string]string, name string) error {
	id := a.storeIdentity(name)
	first, ok := seen[id]
	switch {
	case !ok:
		seen[id] = name
		return nil
	case first == name:
		return usagef("the store %q is named twice", name)
	}
	return usagef("the store %q is named twice: %q is the same %s", first, name, kindOf(name))
}

func kindOf(name string) string {
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return "directory"
	}
	if remote.IsURL(name) {
		return "store"
	}
	return "file"
}
