package store

import (
	"strconv"
	"strings"
)

// ChoiceAnswer is the answer to send for text typed in reply to a question:
// a number that names one of its choices (1-based) stands for that
// choice's text; anything else is sent as typed. The explorer and
// `vigil answer` follow this one rule (`vigil answer --raw` sends as typed).
func ChoiceAnswer(text string, choices []string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil && n >= 1 && n <= len(choices) {
		return choices[n-1]
	}
	return text
}
