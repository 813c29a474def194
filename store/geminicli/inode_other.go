//go:build !unix

package geminicli

import "os"

func inodeOf(os.FileInfo) uint64 { return 0 }
