package claudecode

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
)

// DefaultPaths is where Claude Code keeps its store on this machine: its
// config directory (CLAUDE_CONFIG_DIR, else ~/.claude).
func DefaultPaths(getenv func(string) string) []string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return []string{d}
	}
	if h := getenv("HOME"); h != "" {
		return []string{filepath.Join(h, ".claude")}
	}
	return nil
}

// layout is what a path the user named is: Claude's config directory, its
// projects directory, or one project directory (a cwd slug).
type layout struct {
	projects string // the directory of project directories ("" when one project was named)
	project  string // the one project directory named ("" otherwise)
	config   string // the config directory the registry sits in ("" when not known)
}

// registry is the live-session registry directory (sessions/<pid>.json).
func (l layout) registry() string {
	if l.config == "" {
		return ""
	}
	return filepath.Join(l.config, "sessions")
}

// root is the directory a watcher watches.
func (l layout) root() string { return cmpOr(l.project, l.projects) }

// resolve says whether path is a Claude Code store and which kind of path
// it is. A config directory is claimed when its base is .claude or it holds
// a session transcript; a projects directory or a project directory when
// it holds a session transcript (a line with type and sessionId).
func resolve(path string) (layout, bool) {
	if !isDir(path) {
		return layout{}, false
	}
	if p := filepath.Join(path, "projects"); isDir(p) {
		l := layout{projects: p, config: path}
		return l, filepath.Base(path) == ".claude" || len(l.sessionFiles(1)) > 0
	}
	if filepath.Base(path) == "projects" {
		l := layout{projects: path, config: configOf(filepath.Dir(path))}
		return l, len(l.sessionFiles(1)) > 0
	}
	l := layout{project: path}
	if parent := filepath.Dir(path); filepath.Base(parent) == "projects" {
		l.config = configOf(filepath.Dir(parent))
	}
	return l, len(l.sessionFiles(1)) > 0
}

// configOf is dir when it looks like Claude's own config directory (so its
// sessions/ is the registry of live sessions), else "".
func configOf(dir string) string {
	if filepath.Base(dir) == ".claude" {
		return dir
	}
	for _, n := range []string{"sessions", "settings.json", "shell-snapshots", "backups", ".last-cleanup", "history.jsonl"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return dir
		}
	}
	return ""
}

func (l layout) projectDirs() []string {
	if l.project != "" {
		return []string{l.project}
	}
	ents, err := os.ReadDir(l.projects)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if p := filepath.Join(l.projects, e.Name()); isDir(p) {
			out = append(out, p)
		}
	}
	return out
}

// sessionFiles lists up to limit main transcripts that look like one, for
// detection (the store lists them through its tree).
func (l layout) sessionFiles(limit int) []string {
	var out []string
	for _, d := range l.projectDirs() {
		m, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
		sort.Strings(m)
		for _, f := range m {
			if !looksLikeTranscript(f) {
				continue
			}
			if out = append(out, f); len(out) >= limit {
				return out
			}
		}
	}
	return out
}

// looksLikeTranscript reads a file's first line: a JSON object with a type
// and a sessionId.
func looksLikeTranscript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil {
		return false
	}
	var head struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
	}
	return json.Unmarshal(line, &head) == nil && head.Type != "" && head.SessionID != ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
