package audit

import "strings"

// StoreID names the store now at path, not the path: its file system
// device, inode and (where the system keeps one) birth time. A store
// replaced under the same name (a new database renamed over the old one, a
// run directory made again) has another, so a decision recorded against
// the old store is never shown as the new one's; the birth time tells a
// new file from an old one whose freed inode number was given again. A URL
// (ssh://…) or a path that cannot be read has no identity here: "".
func StoreID(path string) string {
	if path == "" || strings.Contains(path, "://") {
		return ""
	}
	return fileID(path)
}
