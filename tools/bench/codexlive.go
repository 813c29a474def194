package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// codexLive is the newest session of a Codex tree, live: a scratch tree
// that holds the whole history (every rollout a hard link of the cached
// one, which nothing writes) but for the newest session's rollout, a copy
// that a new task is appended to, as Codex appends to a session the
// person resumes. Each step is what the real CLI wrote for a shell step
// (the three-step fixture's lines, with fresh ids and times): the call,
// its usage and the command's completion, then the call's output, the
// line a step's row waits for.
type codexLive struct {
	root, thread string
	f            *os.File
	ordinal      int
	step         []string // the fixture's lines of one shell step: call, usage, completion, output, token count
}

// The fixture's three-step session and the ids of its first shell step.
const (
	codexStepsThread = "01a24257-53d0-7901-84c8-7a183281d969"
	codexStepsTurn   = "01a24257-53ea-7951-969b-76ce47167e22"
	codexStepsCall   = "mock0008"
	codexStepsChunk  = "f58a1b"
)

var (
	codexStamp   = regexp.MustCompile(`^\{"timestamp":"[^"]*"`)
	codexOrdinal = regexp.MustCompile(`"ordinal":[0-9]+`)
)

// newCodexLive lays out the scratch tree under dir from the cached tree at
// sessions and starts a new task in the newest session's copy.
func newCodexLive(dir, sessions string, h codexTree) (*codexLive, error) {
	var rollouts []string
	root := filepath.Join(dir, "sessions")
	err := filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sessions, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		rollouts = append(rollouts, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Names carry the start time: the newest session's parent starts a
	// second before its sub-agent, the last name.
	names := append([]string(nil), rollouts...)
	sortByBase(names)
	if len(names) < 2 {
		return nil, fmt.Errorf("%s holds no sessions", sessions)
	}
	newest := names[len(names)-2]
	for _, rel := range rollouts {
		if rel == newest {
			continue
		}
		if err := os.Link(filepath.Join(sessions, rel), filepath.Join(root, rel)); err != nil {
			return nil, fmt.Errorf("the live tree links the history's rollouts (it must be on the cache's file system): %w", err)
		}
	}
	body, err := os.ReadFile(filepath.Join(sessions, newest))
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(body, []byte(h.newestGoal())) {
		return nil, fmt.Errorf("%s is not the newest session (no %q)", newest, h.newestGoal())
	}
	thread := codexUUID.FindString(filepath.Base(newest))
	file := filepath.Join(root, newest)
	if err := os.WriteFile(file, body, 0o644); err != nil {
		return nil, err
	}
	fixture, err := os.ReadFile(filepath.Join(agentFixtures("codex", "rollout"), "steps3-rollout-2026-12-04T18-35-49-"+codexStepsThread+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("the live steps are the real CLI's: %w", err)
	}
	lines := strings.SplitAfter(string(fixture), "\n")
	if len(lines) < 14 || !strings.Contains(lines[12], `"function_call_output"`) || !strings.Contains(lines[12], codexStepsChunk) {
		return nil, fmt.Errorf("the three-step fixture is not laid out as the live steps expect")
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	l := &codexLive{root: root, thread: thread, f: f, ordinal: bytes.Count(body, []byte("\n")), step: lines[9:14]}
	// The task: its start, its context, the person's prompt; then the
	// first step's call, running.
	for _, i := range []int{1, 5, 7} {
		if err := l.write(lines[i], -1); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := l.begin(0); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func sortByBase(paths []string) {
	slices.SortFunc(paths, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
}

// write appends one fixture line as step i's (-1: the task's), with its
// ids made the step's own, the live thread's, and the time now.
func (l *codexLive) write(line string, i int) error {
	r := []string{codexStepsThread, l.thread, codexStepsTurn, l.thread[:len(l.thread)-12] + "00000000beef"}
	if i >= 0 {
		r = append(r, codexStepsCall, fmt.Sprintf("live%06d", i), "echo hi 1", fmt.Sprintf("echo live %d", i),
			`hi 1\n`, fmt.Sprintf(`live %d\n`, i), codexStepsChunk, codexChunk(i),
			"fco_01a24257-60af-7993-ad72-3ae6996852da", fmt.Sprintf("fco_%s%012x", l.thread[:24], i))
	}
	line = strings.NewReplacer(r...).Replace(line)
	line = codexStamp.ReplaceAllString(line, `{"timestamp":"`+time.Now().UTC().Format("2006-01-02T15:04:05.000Z")+`"`)
	line = codexOrdinal.ReplaceAllLiteralString(line, `"ordinal":`+strconv.Itoa(l.ordinal))
	l.ordinal++
	_, err := io.WriteString(l.f, line)
	return err
}

// codexChunk is step i's chunk id, the first line of its output.
func codexChunk(i int) string { return fmt.Sprintf("%06x", 0xc0de00+i) }

// begin writes step i's call, its usage and the command's completion.
func (l *codexLive) begin(i int) error {
	for _, line := range l.step[:3] {
		if err := l.write(line, i); err != nil {
			return err
		}
	}
	return nil
}

// appendLine writes step i's output (the timed line: it commits the step,
// whose row then shows as a tool call done), then the token count after it
// and the next step's call: what a shell step of Codex writes.
func (l *codexLive) appendLine(i int) (string, time.Time, error) {
	if err := l.write(l.step[3], i); err != nil {
		return "", time.Time{}, err
	}
	at := time.Now()
	if err := l.write(l.step[4], i); err != nil {
		return "", at, err
	}
	// The step's row: committed (its placeholder said "… running").
	return fmt.Sprintf(`tool · exec_command {"cmd": "echo live %d"}`, i), at, l.begin(i + 1)
}

func (l *codexLive) close() error { return l.f.Close() }

// codexLiveRow times a line appended to the newest session of the tree to
// its row on screen, the explorer started on that session.
func codexLiveRow(c *config, t *term, sessions string, h codexTree) (row, error) {
	l, err := newCodexLive(c.work, sessions, h)
	if err != nil {
		return row{}, err
	}
	defer l.close()
	// Ready once every run is listed: while the first page is up the
	// explorer reads no changes (tui's firstPageState), and reading every
	// rollout's list entry takes seconds on this tree; a line appended then
	// waits for it.
	return lineToScreen(c, t, h.String(), []string{"--store", l.root, "--run", l.thread}, textfmt.Thousands(int64(h.Sessions))+" runs", l.appendLine)
}
