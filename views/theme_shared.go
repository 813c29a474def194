package views

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
	"sync"

	"github.com/charmbracelet/colorprofile"
)

// A Theme is never changed once made, and is safe to share (its styles'
// memos lock). vigil serve makes one for every session, so what is kept
// by theme (a pane's drawing, a frame's edges) could not be shared by
// sessions that draw alike: NewThemeFor gives every caller asking for the
// same look the same Theme.

type themeKey struct {
	dark, noColor bool
	profile       colorprofile.Profile
	over          string // the replaced colours, in order
}

var themes struct {
	sync.Mutex
	m map[themeKey]*Theme
}

func sharedTheme(dark, noColor bool, over map[string]color.Color, profile colorprofile.Profile) *Theme {
	k := themeKey{dark: dark, noColor: noColor, profile: profile, over: overKey(over)}
	themes.Lock()
	defer themes.Unlock()
	if t, ok := themes.m[k]; ok {
		return t
	}
	if themes.m == nil || len(themes.m) >= 64 {
		themes.m = map[themeKey]*Theme{}
	}
	t := newThemeFor(dark, noColor, over, profile)
	themes.m[k] = t
	return t
}

func overKey(over map[string]color.Color) string {
	if len(over) == 0 {
		return ""
	}
	roles := make([]string, 0, len(over))
	for r := range over {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	var b strings.Builder
	for _, r := range roles {
		c := over[r]
		if c == nil {
			fmt.Fprintf(&b, "%s=nil;", r)
			continue
		}
		cr, cg, cb, ca := c.RGBA()
		fmt.Fprintf(&b, "%s=%T:%v:%d,%d,%d,%d;", r, c, c, cr, cg, cb, ca) // the type and value too: indexed colours 0 and 16 are both black
	}
	return b.String()
}
