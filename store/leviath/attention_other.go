//go:build !amd64

package leviath

// attention is the index of b's first backslash or control character
// (len(b): none).
func attention(b []byte) int { return attentionGo(b) }

// stop is the index of b's first quote, backslash or control character
// (len(b): none).
func stop(b []byte) int { return stopGo(b) }
