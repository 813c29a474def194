//go:build unix

package codex

import (
	"os"
	"syscall"
)

// inodeOf tells a rollout replaced under the same name from one appended to.
func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
