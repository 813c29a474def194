// Package config reads vigil's user configuration file,
// $XDG_CONFIG_HOME/vigil/config.toml (~/.config/vigil/config.toml when
// XDG_CONFIG_HOME is unset). A missing file is the defaults. Anything
// wrong in it — bad TOML, an unknown key, a value of the wrong type or out
// of range, two actions on one key — is one error naming the key; nothing
// in it can crash vigil. docs/config.md lists every key and its default.
package config

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
)

// Config is the file's settings, defaults filled in.
type Config struct {
	Path string // where it was looked for
	Read bool   // whether a file was there

	// Store is the store opened when none is named (after --store, PATH
	// and $VIGIL_STORE; before looking in the usual places). "" is none.
	Store string

	Notify Notify
	Theme  Theme
	// Keys remaps actions to keys (keymap action names, e.g. "approve").
	Keys map[string][]string
	// GateTimeout is how long `vigil gate` waits for a decision before it
	// hands the question back to the agent's own prompt; 0 is the default.
	GateTimeout time.Duration
}

// Notify turns each notice on or off, and may force the desktop sequence.
type Notify struct {
	Bell    bool
	Desktop bool
	Title   bool
	// Protocol is the desktop notification sequence: "auto" (chosen for the
	// terminal), "osc9", "osc777" or "osc99".
	Protocol string
}

// Theme is the colour scheme: the background it is for, and colours that
// replace the named palette's.
type Theme struct {
	Mode    string                 // "auto" (ask the terminal), "dark" or "light"
	Palette map[string]color.Color // palette role name → colour
}

// Default is the settings with no file.
func Default() Config {
	return Config{Notify: Notify{Bell: true, Desktop: true, Title: true, Protocol: "auto"}, Theme: Theme{Mode: "auto"}}
}

// Path is where the file is looked for.
func Path(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "vigil", "config.toml"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot tell where the config file is: neither $XDG_CONFIG_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".config", "vigil", "config.toml"), nil
}

// PaletteRoles are the colour names theme.palette takes.
var PaletteRoles = []string{"text", "muted", "faint", "border", "accent", "select_bg", "select_blur_bg",
	"running", "waiting", "paused", "stale", "good", "bad", "estimate", "reported"}

// file is the TOML as written; pointers tell a key left out from a zero.
type file struct {
	Store  *string `toml:"store"`
	Notify struct {
		Bell     *bool   `toml:"bell"`
		Desktop  *bool   `toml:"desktop"`
		Title    *bool   `toml:"title"`
		Protocol *string `toml:"protocol"`
	} `toml:"notify"`
	Theme struct {
		Mode    *string           `toml:"mode"`
		Palette map[string]string `toml:"palette"`
	} `toml:"theme"`
	Keys map[string]any `toml:"keys"`
	Gate struct {
		Timeout *string `toml:"timeout"`
	} `toml:"gate"`
}

// Load reads the file at path; a missing file is the defaults.
func Load(path string) (Config, error) {
	c := Default()
	c.Path = path
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return c, fmt.Errorf("%s: %w", path, err)
	}
	c.Read = true
	if err := c.parse(string(b)); err != nil {
		return Default(), fmt.Errorf("%s: %s", path, err)
	}
	return c, nil
}

func (c *Config) parse(text string) error {
	var f file
	md, err := toml.Decode(text, &f)
	if err != nil {
		return oneLine(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("%s: unknown key (see docs/config.md)", und[0])
	}
	if f.Store != nil {
		c.Store = *f.Store
	}
	n := f.Notify
	set(&c.Notify.Bell, n.Bell)
	set(&c.Notify.Desktop, n.Desktop)
	set(&c.Notify.Title, n.Title)
	if n.Protocol != nil {
		switch *n.Protocol {
		case "auto", "osc9", "osc777", "osc99":
			c.Notify.Protocol = *n.Protocol
		default:
			return fmt.Errorf("notify.protocol: %q is not auto, osc9, osc777 or osc99", *n.Protocol)
		}
	}
	if m := f.Theme.Mode; m != nil {
		switch *m {
		case "auto", "dark", "light":
			c.Theme.Mode = *m
		default:
			return fmt.Errorf("theme.mode: %q is not dark, light or auto", *m)
		}
	}
	if t := f.Gate.Timeout; t != nil {
		d, err := time.ParseDuration(*t)
		if err != nil || d <= 0 {
			return fmt.Errorf("gate.timeout: %q is not a duration such as 10m", *t)
		}
		c.GateTimeout = d
	}
	if err := c.palette(f.Theme.Palette); err != nil {
		return err
	}
	return c.keys(f.Keys)
}

func set(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

func (c *Config) palette(p map[string]string) error {
	names := sortedKeys(p)
	for _, name := range names {
		known := false
		for _, r := range PaletteRoles {
			known = known || r == name
		}
		if !known {
			return fmt.Errorf("theme.palette.%s: no such colour (one of: %s)", name, strings.Join(PaletteRoles, ", "))
		}
		col, ok := parseColor(p[name])
		if !ok {
			return fmt.Errorf("theme.palette.%s: %q is not a colour (#rrggbb, #rgb, or 0–255)", name, p[name])
		}
		if c.Theme.Palette == nil {
			c.Theme.Palette = map[string]color.Color{}
		}
		c.Theme.Palette[name] = col
	}
	return nil
}

// parseColor reads #rrggbb, #rgb, or an ANSI 256-colour index.
func parseColor(s string) (color.Color, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 255 {
			return nil, false
		}
		if n < 16 {
			return ansi.BasicColor(n), true
		}
		return ansi.IndexedColor(n), true
	}
	if !strings.HasPrefix(s, "#") || (len(s) != 7 && len(s) != 4) {
		return nil, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return nil, false
	}
	if len(s) == 4 {
		r, g, b := uint8(v>>8&0xf), uint8(v>>4&0xf), uint8(v&0xf)
		return color.RGBA{r * 17, g * 17, b * 17, 0xff}, true
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}, true
}

func (c *Config) keys(raw map[string]any) error {
	if len(raw) == 0 {
		return nil
	}
	m := map[string][]string{}
	for _, name := range sortedKeys(raw) {
		switch v := raw[name].(type) {
		case string:
			m[name] = []string{v}
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return fmt.Errorf("keys.%s: want a key or a list of keys (strings), got %T in the list", name, e)
				}
				m[name] = append(m[name], s)
			}
			if len(v) == 0 {
				m[name] = nil
			}
		default:
			return fmt.Errorf("keys.%s: want a key or a list of keys (strings), got %s", name, tomlType(v))
		}
	}
	// Validated against the real keymap now, so a conflict is found when
	// the file is read, not when a key is pressed.
	k := keymap.Default()
	if err := k.Remap(m); err != nil {
		return err
	}
	c.Keys = m
	return nil
}

func tomlType(v any) string {
	switch v.(type) {
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

// oneLine makes the TOML library's error one line that names the key
// where it can.
func oneLine(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			return fmt.Errorf("line %d (key %s): %s", pe.Position.Line, pe.LastKey, msg)
		}
		return fmt.Errorf("line %d: %s", pe.Position.Line, msg)
	}
	msg := strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "toml: ")), " ")
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s: want %s, got %s (line %s)", m[2], typeWord(m[4]), typeWord(m[3]), m[1])
	}
	return errors.New(msg)
}

// typeMismatch is the library's wording for a value of the wrong type.
var typeMismatch = regexp.MustCompile(`^line (\d+) \(last key "([^"]+)"\): incompatible types: TOML value has type (\S+); destination has type (\S+)$`)

func typeWord(t string) string {
	switch t {
	case "int64", "integer":
		return "an integer"
	case "float64", "float":
		return "a number"
	case "bool", "boolean":
		return "true or false"
	case "string":
		return "a string"
	case "map[string]interface", "map[string]interface{}", "map[string]any", "table", "struct":
		return "a table"
	case "[]interface", "[]interface{}", "slice", "array":
		return "a list"
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
