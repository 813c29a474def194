package config

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMissingFileIsTheDefaults(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "nope", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	if c.Read || c.Store != "" || c.Notify != d.Notify || c.Theme.Mode != "auto" || c.Keys != nil {
		t.Fatalf("%+v", c)
	}
}

func TestAFullFile(t *testing.T) {
	c, err := Load(write(t, `
store = "~/work/runs.sqlite3"
[notify]
bell = false
protocol = "osc777"
[theme]
mode = "light"
[theme.palette]
accent = "#ff8800"
bad = "#f00"
muted = "245"
[keys]
approve = "A"
next_waiting = ["ctrl+w", "W"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "~/work/runs.sqlite3" || c.Notify.Bell || !c.Notify.Desktop || !c.Notify.Title || c.Notify.Protocol != "osc777" || c.Theme.Mode != "light" {
		t.Fatalf("%+v", c)
	}
	if r, g, b, _ := c.Theme.Palette["accent"].RGBA(); r>>8 != 0xff || g>>8 != 0x88 || b != 0 {
		t.Fatalf("accent = %v", c.Theme.Palette["accent"])
	}
	if c.Theme.Palette["bad"] != (color.RGBA{0xff, 0, 0, 0xff}) || c.Theme.Palette["muted"] == nil {
		t.Fatalf("palette = %v", c.Theme.Palette)
	}
	if strings.Join(c.Keys["next_waiting"], ",") != "ctrl+w,W" || c.Keys["approve"][0] != "A" {
		t.Fatalf("keys = %v", c.Keys)
	}
}

// Every bad input is one line that names the file and the key.
func TestBadInputIsOneLineNamingTheKey(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"bad TOML", "[notify\nbell = true\n", "to end table name"},
		{"bad TOML value", "[notify]\nbell = yes\n", "line 2 (key notify.bell)"},
		{"unknown key", "[theme]\ncolour = \"dark\"\n", "theme.colour: unknown key"},
		{"unknown table", "[sound]\non = true\n", "sound: unknown key"},
		{"wrong type", "[notify]\nbell = \"loud\"\n", "notify.bell: want true or false, got a string (line 2)"},
		{"wrong type: store", "store = 3\n", "store: want a string, got an integer (line 1)"},
		{"bad mode", "[theme]\nmode = \"dim\"\n", `theme.mode: "dim" is not dark, light or auto`},
		{"bad colour", "[theme.palette]\naccent = \"pink\"\n", `theme.palette.accent: "pink" is not a colour`},
		{"unknown colour", "[theme.palette]\nbackground = \"#000000\"\n", "theme.palette.background: no such colour"},
		{"bad protocol", "[notify]\nprotocol = \"growl\"\n", `notify.protocol: "growl" is not auto`},
		{"key of wrong type", "[keys]\napprove = 1\n", "keys.approve: want a key or a list of keys (strings), got an integer"},
		{"unknown action", "[keys]\nexplode = \"x\"\n", "keys.explode: no such action"},
		{"bad gate timeout", "[gate]\ntimeout = \"soon\"\n", `gate.timeout: "soon" is not a duration`},
		{"key conflict", "[keys]\napprove = \"q\"\n", `keys: "q" is bound to both approve and quit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.text)
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, p+": ") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line with %q", msg, c.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if p, _ := Path(get); p != "/x/cfg/vigil/config.toml" {
		t.Fatal(p)
	}
	env["XDG_CONFIG_HOME"] = "relative" // the spec says to ignore a relative one
	if p, _ := Path(get); p != "/home/u/.config/vigil/config.toml" {
		t.Fatal(p)
	}
	delete(env, "HOME")
	if _, err := Path(get); err == nil {
		t.Fatal("no error without a home")
	}
}

func TestGateTimeout(t *testing.T) {
	c, err := Load(write(t, "[gate]\ntimeout = \"90s\"\n"))
	if err != nil || c.GateTimeout != 90*time.Second {
		t.Fatalf("gate timeout %v, %v", c.GateTimeout, err)
	}
}
