//go:build !unix

package watch

import "os"

// inode is unknown here; replacement is still detected by os.SameFile.
func inode(os.FileInfo) uint64 { return 0 }
