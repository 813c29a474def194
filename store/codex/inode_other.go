//go:build !unix

package codex

import "os"

// inodeOf is 0 where the platform has no inode: a replaced rollout is
// then noticed only when it shrinks.
func inodeOf(os.FileInfo) uint64 { return 0 }
