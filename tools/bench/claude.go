package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// history is a ~/.claude/projects of months: Sessions sessions over
// Projects project directories, each the real CLI's session (the fixture
// transcript internal/testkit/agentcli recorded from Claude Code driven by
// the test model server, with its sub-agent) written again with fresh ids,
// started an hour after the one before and last written 50 minutes after
// its start; Big of them (half among the newest ten, half spread over the
// history) grown to BigBytes by repeating the session's turns, each copy
// with fresh record, message and tool ids.
type history struct {
	Sessions, Projects, Big int
	BigBytes                int64
}

func (h history) String() string {
	return fmt.Sprintf("Claude Code history, %s sessions, %d of %d MB", count(h.Sessions), h.Big, h.BigBytes>>20)
}

func (h history) dir() string {
	return fmt.Sprintf("claude-s%d-p%d-b%d-%d-v1", h.Sessions, h.Projects, h.Big, h.BigBytes)
}

// newestGoal is the goal of the session that started last.
func (h history) newestGoal() string { return sessionMark(h.Sessions) }

// sessionMark numbers a replicated session's prompt or title: the bench
// waits for the newest one's.
func sessionMark(n int) string { return fmt.Sprintf("session %d: ", n) }

var anySession = regexp.MustCompile(`session \d+: `)

// historyStart is when a replicated history begins: session n starts n
// hours later.
var historyStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// bigSessions are the sessions of a history of n grown to size: half
// among the newest, half spread over the history.
func bigSessions(n, big int) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < big; i++ {
		if i%2 == 0 {
			out[n-1-i] = true // among the newest
		} else {
			out[1+i*n/big] = true // spread over the history
		}
	}
	return out
}

// sharedDir is the project's shared fixtures directory: $VIGIL_SHARED,
// else shared beside the checkout.
func sharedDir() string {
	if s := os.Getenv("VIGIL_SHARED"); s != "" {
		return s
	}
	if root, err := moduleRoot(); err == nil {
		return filepath.Join(filepath.Dir(root), "shared")
	}
	return "../shared"
}

// The fixture's ids and clock, replaced in every copy.
const (
	fixtureSession = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	fixtureAgent   = "adacfd069ace754ac"
	fixtureHour    = "2026-12-04T18:"
	fixtureGoal    = "Delegate to a sub-agent."
)

// recordIDs are the ids a repeated turn must not share with its original:
// record uuids, message ids, tool-use ids, request ids.
var recordIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b(msg|toolu|req)_[A-Za-z0-9]+`)

// historyPath returns the projects directory of a history under dir,
// building it first when there is none (a ".done" file marks a finished
// build).
func historyPath(dir string, h history, log func(string, ...any)) (string, error) {
	root := filepath.Join(dir, h.dir())
	projects := filepath.Join(root, "projects")
	if _, err := os.Stat(root + ".done"); err == nil {
		return projects, nil
	}
	os.RemoveAll(root)
	src := filepath.Join(sharedDir(), "fixtures", "agents", "claude-code", "transcript")
	main, err := os.ReadFile(filepath.Join(src, "main-session.jsonl"))
	if err != nil {
		return "", fmt.Errorf("the Claude Code history is built from the real CLI's transcript: %w (set $VIGIL_SHARED)", err)
	}
	sub, err := os.ReadFile(filepath.Join(src, "subagents", "agent-"+fixtureAgent+".jsonl"))
	if err != nil {
		return "", err
	}
	meta, err := os.ReadFile(filepath.Join(src, "subagents", "agent-"+fixtureAgent+".meta.json"))
	if err != nil {
		return "", err
	}
	start := time.Now()
	log("building %s (%s) once; it is cached for the next run", h, projects)
	big := bigSessions(h.Sessions, h.Big)
	for n := 1; n <= h.Sessions; n++ {
		began := historyStart.Add(time.Duration(n) * time.Hour)
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n)
		agent := fmt.Sprintf("a%016x", n)
		re := strings.NewReplacer(fixtureSession, id, fixtureAgent, agent,
			fixtureHour, began.Format("2006-01-02T15:"), fixtureGoal, sessionMark(n)+fixtureGoal)
		proj := filepath.Join(projects, fmt.Sprintf("-home-dev-work-project%d", n%h.Projects))
		body := re.Replace(string(main))
		var w []string
		w = append(w, filepath.Join(proj, id+".jsonl"), body)
		w = append(w, filepath.Join(proj, id, "subagents", "agent-"+agent+".jsonl"), re.Replace(string(sub)))
		w = append(w, filepath.Join(proj, id, "subagents", "agent-"+agent+".meta.json"), string(meta))
		for i := 0; i < len(w); i += 2 {
			if err := os.MkdirAll(filepath.Dir(w[i]), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(w[i], []byte(w[i+1]), 0o644); err != nil {
				return "", err
			}
		}
		if big[n] {
			if err := grow(w[0], body, id, h.BigBytes); err != nil {
				return "", err
			}
		}
		mod := began.Add(50 * time.Minute)
		for i := 0; i < len(w); i += 2 {
			if err := os.Chtimes(w[i], mod, mod); err != nil {
				return "", err
			}
		}
	}
	log("built %s in %s", h, time.Since(start).Round(time.Second))
	return projects, os.WriteFile(root+".done", nil, 0o644)
}

// agentFixtures is a directory of the real CLIs' recorded files in the
// shared fixtures ($VIGIL_SHARED, else ../shared).
func agentFixtures(elem ...string) string {
	return filepath.Join(append([]string{sharedDir(), "fixtures", "agents"}, elem...)...)
}

// grow appends copies of the session's turns (every line after its first
// user prompt) to path until it holds size bytes, each copy's record,
// message and tool ids made its own (the session id kept).
func grow(path, body, session string, size int64) error {
	lines := strings.SplitAfter(body, "\n")
	from := 0
	for i, l := range lines {
		if strings.Contains(l, `"type":"user"`) {
			from = i + 1
			break
		}
	}
	return appendCopies(path, int64(len(body)), strings.Join(lines[from:], ""), recordIDs, func(id string, r int) string {
		if id == session {
			return id
		}
		suffix := fmt.Sprintf("%06x", r)
		if strings.Contains(id, "-") {
			return id[:len(id)-6] + suffix // a uuid keeps its shape
		}
		return id + "r" + suffix
	}, size)
}

// appendCopies appends copies of turns to path (written bytes long) until
// it holds size bytes; in copy r (from 1) each match of ids is fresh(id,
// r). The matches are found once: every copy is the same text.
func appendCopies(path string, written int64, turns string, ids *regexp.Regexp, fresh func(id string, r int) string, size int64) error {
	at := ids.FindAllStringIndex(turns, -1)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	var b strings.Builder
	for r := 1; written < size; r++ {
		b.Reset()
		prev := 0
		for _, m := range at {
			b.WriteString(turns[prev:m[0]])
			b.WriteString(fresh(turns[m[0]:m[1]], r))
			prev = m[1]
		}
		b.WriteString(turns[prev:])
		n, err := f.WriteString(b.String())
		if err != nil {
			f.Close()
			return err
		}
		written += int64(n)
	}
	return f.Close()
}

// liveClaude is the history with its newest session live: a scratch
// config directory whose projects hold the cached history's files as hard
// links but the newest session's transcript as a copy the bench appends
// to, and whose registry names the bench's own process as that session's
// CLI (as Claude Code's sessions/<pid>.json does).
func liveClaude(c *config, h history, projects string) (config string, session string, err error) {
	config = filepath.Join(c.work, "claude-live", ".claude")
	n := h.Sessions
	session = fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n)
	live := filepath.Join(fmt.Sprintf("-home-dev-work-project%d", n%h.Projects), session+".jsonl")
	err = filepath.WalkDir(projects, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(projects, p)
		dst := filepath.Join(config, "projects", rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case rel == live:
			_, err := copyFile(p, dst)
			return err
		default:
			return os.Link(p, dst)
		}
	})
	if err != nil {
		return "", "", err
	}
	reg := filepath.Join(config, "sessions")
	if err := os.MkdirAll(reg, 0o755); err != nil {
		return "", "", err
	}
	entry, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "sessionId": session,
		"startedAt": time.Now().UnixMilli(), "procStart": procStart(os.Getpid()), "status": "busy"})
	return config, session, os.WriteFile(filepath.Join(reg, fmt.Sprintf("%d.json", os.Getpid())), entry, 0o644)
}

// claudeAppender appends, each call, one tool call as Claude Code writes
// it: the assistant line asking for a Bash command that carries the
// marker (the line timed: the timeline row shows the call), after the
// user line with the result of the call before. Both are the fixture
// transcript's own lines with their ids, time and content made new.
func claudeAppender(config, session string) (func(i int) (string, time.Time, error), func(), error) {
	body, err := os.ReadFile(agentFixtures("claude-code", "transcript", "main-session.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	var ask, result string
	for _, l := range strings.Split(string(body), "\n") {
		switch {
		case ask == "" && strings.Contains(l, `"type":"assistant"`):
			ask = l
		case result == "" && strings.Contains(l, `"type":"tool_result"`):
			result = l
		}
	}
	if ask == "" || result == "" {
		return nil, nil, fmt.Errorf("the fixture transcript has no assistant line or no tool result")
	}
	var paths []string
	filepath.WalkDir(filepath.Join(config, "projects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == session+".jsonl" {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) != 1 {
		return nil, nil, fmt.Errorf("the live session's transcript is not in %s", config)
	}
	f, err := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	parent := ""
	// line is a template line with its ids and time made new and its
	// message content replaced.
	line := func(template, id string, edit func(msg map[string]any)) ([]byte, error) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(template), &rec); err != nil {
			return nil, err
		}
		msg, _ := rec["message"].(map[string]any)
		if msg == nil {
			return nil, fmt.Errorf("a fixture line has no message")
		}
		edit(msg)
		rec["uuid"], rec["sessionId"], rec["parentUuid"] = id, session, parent
		rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		parent = id
		b, err := json.Marshal(rec)
		return append(b, '\n'), err
	}
	appendLine := func(i int) (string, time.Time, error) {
		if i > 0 {
			b, err := line(result, fmt.Sprintf("%08x-2222-4000-8000-%012x", i-1, i-1), func(msg map[string]any) {
				msg["content"] = []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_live%04d", i-1),
					"content": fmt.Sprintf("ls: cannot access 'mk%04d'", i-1)}}
			})
			if err != nil {
				return "", time.Time{}, err
			}
			if _, err := f.Write(b); err != nil {
				return "", time.Time{}, err
			}
		}
		marker := fmt.Sprintf("mk%04d", i) // short: the row shows the call's head
		b, err := line(ask, fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i), func(msg map[string]any) {
			msg["id"], msg["stop_reason"] = fmt.Sprintf("msg_live%04d", i), "tool_use"
			msg["content"] = []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_live%04d", i), "name": "Bash",
				"input": map[string]any{"command": "ls " + marker}}}
		})
		if err != nil {
			return "", time.Time{}, err
		}
		if _, err := f.Write(b); err != nil {
			return "", time.Time{}, err
		}
		return marker, time.Now(), nil
	}
	return appendLine, func() { f.Close() }, nil
}

// procStart is a process's start time in clock ticks (/proc/PID/stat's
// 22nd field), as Claude Code's registry records it.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	if f := strings.Fields(s); len(f) > 19 {
		return f[19]
	}
	return ""
}

// claudeLine times lines appended to the history's newest session, live,
// to the explorer showing that session.
func claudeLine(c *config, t *term, h history, projects string) (row, error) {
	config, session, err := liveClaude(c, h, projects)
	if err != nil {
		return row{}, err
	}
	appendLine, done, err := claudeAppender(config, session)
	if err != nil {
		return row{}, err
	}
	defer done()
	return lineToScreen(c, t, h.String(), []string{"--store", config, "--run", session}, h.newestGoal(), appendLine)
}
