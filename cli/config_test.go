package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/tui"
)

func (h *harness) home() string {
	for _, kv := range h.env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	h.t.Fatal("no HOME")
	return ""
}

func writeConfig(t *testing.T, h *harness, text string) string {
	t.Helper()
	p := filepath.Join(h.home(), ".config", "vigil", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPath(t *testing.T) {
	h := newHarness(t)
	r := h.run("config", "path")
	r.wantCode(t, 0)
	want := filepath.Join(h.home(), ".config", "vigil", "config.toml")
	if strings.TrimSpace(r.stdout) != want || !strings.Contains(r.stderr, "no file there: the defaults are in use") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	h.env = append(h.env, "XDG_CONFIG_HOME=/etc/xdg-test")
	r = h.run("config", "path")
	if strings.TrimSpace(r.stdout) != "/etc/xdg-test/vigil/config.toml" {
		t.Fatalf("stdout %q", r.stdout)
	}
}

// A bad file is one line naming the key, exit 2, from every command that
// reads it, and from `config path`.
func TestBadConfigIsOneLine(t *testing.T) {
	h := newHarness(t)
	p := writeConfig(t, h, "[keys]\napprove = \"q\"\n")
	r := h.run("config", "path")
	r.wantCode(t, 2)
	want := "vigil: config " + p + `: keys: "q" is bound to both approve and quit` + "\n"
	if r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
	r = h.run("runs")
	r.wantCode(t, 2)
	if r.stderr != want {
		t.Fatalf("runs: stderr %q", r.stderr)
	}
}

// The config's store is opened when none is named; its theme, keys and
// notices reach the explorer.
func TestConfigReachesTheExplorer(t *testing.T) {
	h := newHarness(t)
	store := fixtureStore(t)
	writeConfig(t, h, `store = "`+store+`"
[notify]
bell = false
protocol = "osc99"
[theme]
mode = "light"
[theme.palette]
accent = "#ff8800"
[keys]
approve = "A"
`)
	var got tui.Options
	h.explore = func(_ context.Context, _ *app, opt tui.Options) error {
		got = opt
		return nil
	}
	r := h.run()
	r.wantCode(t, 0)
	if got.Source == nil || got.Source.Path() != store {
		t.Fatalf("opened %v", got.Source)
	}
	if !got.Notify.NoBell || got.Notify.NoDesktop || got.Notify.Desktop != tui.DesktopOSC99 {
		t.Fatalf("notify = %+v", got.Notify)
	}
	if got.Look.Mode != "light" || got.Look.Palette["accent"] == nil || got.Look.Keys == nil || got.Look.Keys.Approve.Help().Key != "A" {
		t.Fatalf("look = %+v", got.Look)
	}
}

// vigil serve draws every session with the server's config: a bad one stops
// it before it listens, with the explorer's one line.
func TestServeReadsTheConfig(t *testing.T) {
	h := newHarness(t)
	p := writeConfig(t, h, "[keys]\napprove = \"q\"\n")
	r := h.run("serve", "--store", fixtureStore(t), "--authorized-keys", filepath.Join(t.TempDir(), "none"), "--listen", "127.0.0.1:0")
	r.wantCode(t, 2)
	if want := "vigil: config " + p + `: keys: "q" is bound to both approve and quit` + "\n"; r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
}
