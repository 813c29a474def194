package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/agreement"
	"github.com/vigil-run/vigil/internal/testkit/hostile"
	_ "github.com/vigil-run/vigil/store/claudecode"
)

// buildHostile writes a config directory whose session and sub-agent carry
// s in every text vigil reads: prompt, cwd, model, turn text, tool name,
// call id, arguments, result, the sub-agent's description.
func buildHostile(t *testing.T, strs []string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), ".claude")
	proj := filepath.Join(cfg, "projects", "-p")
	for i, s := range strs {
		sid := "00000000-0000-0000-0000-" + pad12(i)
		sub := filepath.Join(proj, sid, "subagents")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		lines := []any{
			map[string]any{"type": "user", "sessionId": sid, "cwd": s, "timestamp": "2026-12-04T18:00:00Z", "message": map[string]any{"role": "user", "content": s}},
			map[string]any{"type": "assistant", "sessionId": sid, "message": map[string]any{"id": "m1", "model": s, "stop_reason": "tool_use",
				"content": []any{map[string]any{"type": "text", "text": s}, map[string]any{"type": "tool_use", "id": "c" + s, "name": s, "input": map[string]any{"command": s}}},
				"usage":   map[string]any{"input_tokens": 5, "output_tokens": 1}}},
			map[string]any{"type": "user", "sessionId": sid, "message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "c" + s, "content": s, "is_error": i%2 == 0}}}},
			map[string]any{"type": "assistant", "sessionId": sid, "message": map[string]any{"id": "m2", "model": s, "stop_reason": s,
				"content": []any{map[string]any{"type": "text", "text": s}}}},
		}
		write(t, filepath.Join(proj, sid+".jsonl"), lines)
		child := lines
		if i%2 == 1 { // a sub-agent left with its call unanswered
			child = lines[:2]
		}
		write(t, filepath.Join(sub, "agent-a"+pad12(i)+".jsonl"), child)
		meta, _ := json.Marshal(map[string]any{"description": s, "toolUseId": "c" + s, "spawnDepth": 1, "finished": i%3 == 0})
		if err := os.WriteFile(filepath.Join(sub, "agent-a"+pad12(i)+".meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func write(t *testing.T, path string, lines []any) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, j...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func pad12(i int) string {
	s := "000000000000" + itoa(i)
	return s[len(s)-12:]
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestHostileStrings: no string from a transcript reaches a terminal as
// anything but text, in the explorer or on the command line.
func TestHostileStrings(t *testing.T) {
	frames, outputs := hostile.Check(t, buildHostile(t, hostile.Corpus()[:12]), hostile.Options{})
	t.Logf("%d frames, %d command outputs", frames, outputs)
}

// TestExplorerAndCLIAgree: the explorer's panes and `vigil runs/show
// --json` report the same state and counts for every run.
func TestExplorerAndCLIAgree(t *testing.T) {
	sum := agreement.Check(t, buildHostile(t, []string{"one", "two", "three"}))
	t.Logf("%+v", sum)
	if sum.Runs != 6 || sum.MaxDepth != 1 || sum.States["crashed"] != 1 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
