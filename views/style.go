package views

import "charm.land/lipgloss/v2"

// Style is a theme's style: lipgloss's own. (A short cut beside lipgloss
// for single-line spans was measured and deleted: docs/performance.md,
// "Faster copies of libraries: rendering".)
type Style = lipgloss.Style
