package leviath

import "golang.org/x/sys/cpu"

// attentionAVX2 is attention 64 bytes a step with AVX2 (attention_amd64.s).
//
//go:noescape
func attentionAVX2(b []byte) int

var haveAVX2 = cpu.X86.HasAVX2

// attention is the index of b's first backslash or control character
// (len(b): none): one AVX2 pass where the CPU has it, else attentionGo.
func attention(b []byte) int {
	if haveAVX2 {
		return attentionAVX2(b)
	}
	return attentionGo(b)
}

// stopAVX2 is stop with AVX2 (attention_amd64.s).
//
//go:noescape
func stopAVX2(b []byte) int

// stop is the index of b's first quote, backslash or control character
// (len(b): none): where a JSON string's plain run ends.
func stop(b []byte) int {
	if haveAVX2 {
		return stopAVX2(b)
	}
	return stopGo(b)
}
