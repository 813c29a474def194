// Package textfmt writes numbers, durations and times the way vigil shows
// them, and cuts and pads text to terminal cells. Both the explorer's panes
// and the command line's tables use it, so a count reads the same on
// screen and in a terminal log; it knows nothing of styles or of stores.
package textfmt
