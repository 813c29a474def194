package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// codexTree is a ~/.codex/sessions of months: Sessions sessions, each the
// real CLI's (the fixture rollouts internal/testkit/agentcli recorded from
// Codex driven by the test model server: a session that spawns a
// sub-agent, and the sub-agent's own rollout) written again with fresh
// thread, turn, message and call ids, started an hour after the one before
// and last written 50 minutes after its start, in the day directory of its
// start (sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl, as Codex lays
// it out); Big of them (as bigSessions picks) grown to BigBytes by
// repeating the session's task, each copy with fresh turn, message and
// call ids and its lines numbered on.
type codexTree struct {
	Sessions, Big int
	BigBytes      int64
}

func (h codexTree) String() string {
	return fmt.Sprintf("Codex sessions, %s sessions, %d of %d MB", count(h.Sessions), h.Big, h.BigBytes>>20)
}

func (h codexTree) dir() string {
	return fmt.Sprintf("codex-s%d-b%d-%d-v1", h.Sessions, h.Big, h.BigBytes)
}

// newestGoal is the goal of the session that started last.
func (h codexTree) newestGoal() string { return fmt.Sprintf("session %d: ", h.Sessions) }

// The fixture's clock and prompt, replaced in every copy. Its ids are
// UUIDv7s sharing their leading 32 bits (the top of the millisecond
// clock), which become the copy's; its call, response and message ids are
// the model server's numbered ones.
const (
	codexFixtureHour  = "2026-12-04T18:"
	codexFixtureDay   = "2026-12-04"
	codexFixtureClock = "01a24257"
	codexFixtureGoal  = "Delegate to a sub-agent."
	codexFixtureStart = 1796407200 // 2026-12-04T18:00:00Z, the hour the fixture was recorded in
)

var (
	codexUUID   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	codexMockID = regexp.MustCompile(`\b(call|fc|resp|msg)_mock[0-9]+\b`)
	// Unix seconds and milliseconds of the fixture's hour.
	codexEpoch = regexp.MustCompile(`\b179640[0-9]{4}([0-9]{3})?\b|\b179641[0-9]{4}([0-9]{3})?\b`)
	// What a repeated task makes its own: turn and message ids (UUIDs),
	// call, response and message ids, and each line's ordinal.
	// (A session's call ids are kind_NNNNNNdddd: never the head of a
	// "msg_<uuid>" id, whose UUID has its own rule.)
	codexCopyIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b(call|fc|resp|msg)_[0-9a-f]{6}[0-9]{4}\b|"ordinal":[0-9]+`)
)

// codexSession is one session's rollouts: the parent's and its
// sub-agent's, each its path under the sessions directory and its body.
type codexSession struct {
	parent, child         string // thread ids
	parentPath, childPath string
	parentBody, childBody string
}

// copyCodexSession writes the fixture session (its thread ids parent and
// child, its rollouts' bodies) again as session n, which starts at began:
// the ids' clock is began's, the call ids are numbered n, every time is
// moved into began's hour and the prompt is numbered.
func copyCodexSession(n int, began time.Time, parent, child, parentBody, childBody string) codexSession {
	clock := fmt.Sprintf("%08x", uint64(began.UnixMilli())>>16)
	shift := began.Unix() - codexFixtureStart
	times := strings.NewReplacer(codexFixtureHour, began.Format("2006-01-02T15:"), codexFixtureDay, began.Format("2006-01-02"),
		codexFixtureGoal, fmt.Sprintf("session %d: %s", n, codexFixtureGoal))
	rewrite := func(body string) string {
		body = codexUUID.ReplaceAllStringFunc(times.Replace(body), func(id string) string {
			return strings.Replace(id, codexFixtureClock, clock, 1)
		})
		body = codexMockID.ReplaceAllStringFunc(body, func(id string) string {
			kind, num, _ := strings.Cut(id, "_mock")
			return fmt.Sprintf("%s_%06x%s", kind, n, num)
		})
		return codexEpoch.ReplaceAllStringFunc(body, func(v string) string {
			x, _ := strconv.ParseInt(v, 10, 64)
			if len(v) == 13 {
				return strconv.FormatInt(x+shift*1000, 10)
			}
			return strconv.FormatInt(x+shift, 10)
		})
	}
	s := codexSession{parent: strings.Replace(parent, codexFixtureClock, clock, 1), child: strings.Replace(child, codexFixtureClock, clock, 1),
		parentBody: rewrite(parentBody), childBody: rewrite(childBody)}
	day := began.Format("2006/01/02")
	name := func(after time.Duration, id string) string {
		return filepath.Join(day, "rollout-"+began.Add(after).Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	}
	s.parentPath, s.childPath = name(35*time.Minute+45*time.Second, s.parent), name(35*time.Minute+46*time.Second, s.child)
	return s
}

// growCodex appends copies of the session's task (every line after its
// session_meta) to path until it holds size bytes, each copy's turn,
// message, response and call ids made its own (the thread ids kept: the
// copies spawn the same sub-agent) and its lines numbered on.
func growCodex(path, body string, threads []string, size int64) error {
	lines := strings.SplitAfter(body, "\n")
	task := strings.Join(lines[1:], "")
	perCopy := int64(strings.Count(task, "\n"))
	return appendCopies(path, int64(len(body)), task, codexCopyIDs, func(id string, r int) string {
		if v, ok := strings.CutPrefix(id, `"ordinal":`); ok {
			k, _ := strconv.ParseInt(v, 10, 64)
			return `"ordinal":` + strconv.FormatInt(k+int64(r)*perCopy, 10)
		}
		for _, t := range threads {
			if id == t {
				return id
			}
		}
		suffix := fmt.Sprintf("%06x", r)
		if strings.Contains(id, "-") {
			return id[:len(id)-6] + suffix // a uuid keeps its shape
		}
		return id + "r" + suffix
	}, size)
}

// codexTreePath returns the sessions directory of a tree under dir,
// building it first when there is none (a ".done" file marks a finished
// build).
func codexTreePath(dir string, h codexTree, log func(string, ...any)) (string, error) {
	root := filepath.Join(dir, h.dir())
	sessions := filepath.Join(root, "sessions")
	if _, err := os.Stat(root + ".done"); err == nil {
		return sessions, nil
	}
	os.RemoveAll(root)
	start := time.Now()
	log("building %s (%s) once; it is cached for the next run", h, sessions)
	if err := buildCodexTree(sessions, h); err != nil {
		return "", err
	}
	log("built %s in %s", h, time.Since(start).Round(time.Second))
	return sessions, os.WriteFile(root+".done", nil, 0o644)
}

func buildCodexTree(sessions string, h codexTree) error {
	src := agentFixtures("codex", "rollout")
	parentFile, err := filepath.Glob(filepath.Join(src, "parent-rollout-*.jsonl"))
	if err != nil || len(parentFile) != 1 {
		return fmt.Errorf("the Codex tree is built from the real CLI's rollouts: no parent-rollout-*.jsonl in %s (set $VIGIL_SHARED)", src)
	}
	childFile, _ := filepath.Glob(filepath.Join(src, "subagent-rollout-*.jsonl"))
	if len(childFile) != 1 {
		return fmt.Errorf("no subagent-rollout-*.jsonl in %s", src)
	}
	parentBody, err := os.ReadFile(parentFile[0])
	if err != nil {
		return err
	}
	childBody, err := os.ReadFile(childFile[0])
	if err != nil {
		return err
	}
	parent := codexUUID.FindString(filepath.Base(parentFile[0]))
	child := codexUUID.FindString(filepath.Base(childFile[0]))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	big := bigSessions(h.Sessions, h.Big)
	for n := 1; n <= h.Sessions; n++ {
		began := base.Add(time.Duration(n) * time.Hour)
		s := copyCodexSession(n, began, parent, child, string(parentBody), string(childBody))
		w := []string{filepath.Join(sessions, s.parentPath), s.parentBody, filepath.Join(sessions, s.childPath), s.childBody}
		for i := 0; i < len(w); i += 2 {
			if err := os.MkdirAll(filepath.Dir(w[i]), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(w[i], []byte(w[i+1]), 0o644); err != nil {
				return err
			}
		}
		if big[n] {
			if err := growCodex(w[0], s.parentBody, []string{s.parent, s.child}, h.BigBytes); err != nil {
				return err
			}
		}
		mod := began.Add(50 * time.Minute)
		for i := 0; i < len(w); i += 2 {
			if err := os.Chtimes(w[i], mod, mod); err != nil {
				return err
			}
		}
	}
	return nil
}
