package geminicli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultPaths is where Gemini CLI keeps its chats on this machine:
// <home>/.gemini/tmp, the home being GEMINI_CLI_HOME when set, else HOME
// (homedir in packages/core/src/utils/paths.ts; Storage.getGlobalTempDir).
func DefaultPaths(getenv func(string) string) []string {
	home := getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = getenv("HOME")
	}
	if home == "" {
		return nil
	}
	return []string{filepath.Join(home, ".gemini", "tmp")}
}

// sessionFile is one chat file: a session's, or a sub-agent's under its
// parent session's directory.
type sessionFile struct {
	path   string
	parent string // the parent session's id, from the directory name ("" for a session)
	// project is the directory that holds chats/ (its .project_root names
	// the workspace).
	project string
}

// chatsDirs resolves what a person named to the chats directories in it:
// a chats directory, a project directory (it holds chats/), or Gemini's
// tmp directory or ~/.gemini (projects under it). A single chat file is
// handled by the caller.
func chatsDirs(root string) []string {
	for _, pat := range []string{"", "chats", "*/chats", "tmp/*/chats"} {
		dirs, _ := filepath.Glob(filepath.Join(root, pat))
		var out []string
		for _, d := range dirs {
			if hasSessions(d) {
				out = append(out, d)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func hasSessions(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "session-*.jsonl"))
	return len(m) > 0
}

// listFiles is every chat file under the chats directories, sessions first
// by name, then sub-agents.
func listFiles(dirs []string) []sessionFile {
	var out []sessionFile
	for _, d := range dirs {
		project := filepath.Dir(d)
		mains, _ := filepath.Glob(filepath.Join(d, "session-*.jsonl"))
		subs, _ := filepath.Glob(filepath.Join(d, "*", "*.jsonl"))
		sort.Strings(mains)
		sort.Strings(subs)
		for _, m := range mains {
			out = append(out, sessionFile{path: m, project: project})
		}
		for _, s := range subs {
			out = append(out, sessionFile{path: s, parent: filepath.Base(filepath.Dir(s)), project: project})
		}
	}
	return out
}

// isChatFile reports a file whose first line is a chat header.
func isChatFile(path string) bool {
	if !strings.HasSuffix(path, ".jsonl") {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
		return false
	}
	return bytes.Contains(head, []byte(`"sessionId"`)) && bytes.Contains(head, []byte(`"projectHash"`))
}

// workspace is the project's root as the CLI wrote it in .project_root.
func workspace(project string) string {
	b, err := os.ReadFile(filepath.Join(project, ".project_root"))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// rawLine is one complete line of a file and where it is.
type rawLine struct {
	off  int64 // its first byte
	end  int64 // the byte after its newline
	text []byte
}

// eachLine reads f's complete lines from off up to limit (<0: the end),
// calling fn with each. A last line without its newline is a write in
// progress: it is not read, and the returned end stops before it.
func eachLine(f *os.File, off, limit int64, fn func(rawLine) error) (end int64, err error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, err
	}
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit-off)
	}
	br := bufio.NewReaderSize(r, 256<<10)
	end = off
	for {
		b, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return end, nil
			}
			return end, err
		}
		l := rawLine{off: end, end: end + int64(len(b)), text: b}
		end = l.end
		if err := fn(l); err != nil {
			return end, err
		}
	}
}
