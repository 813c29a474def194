//go:build !linux

package audit

import (
	"fmt"
	"os"

	"github.com/vigil-run/vigil/store"
)

func fileID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("ino:%d", store.Inode(fi))
}
