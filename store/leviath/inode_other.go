//go:build !unix

package leviath

import "os"

func inodeOf(os.FileInfo) uint64 { return 0 }

func deviceOf(os.FileInfo) uint64 { return 0 }
