package claudecode

import (
	"bytes"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func containsBytes(b, sub []byte) bool { return bytes.Contains(b, sub) }
