package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// A tree drawn frame after frame while its agents' counts, states and
// waits move, its cursor and focus change, and its width changes, shows
// exactly what a tree drawn once from the same lines shows: the kept lines
// (tree_lines.go) never stand in for a line that changed.
func TestTreeKeepsOnlyLinesThatDidNotChange(t *testing.T) {
	env := &Env{Theme: NewTheme(true, false), Keys: keymap.Default(), Now: func() time.Time { return time.Unix(1e9, 0) }}
	nodes := map[string]*AgentNode{}
	var lines []TreeLine
	for i := 0; i < 6; i++ {
		id := fmt.Sprint(i + 1)
		nodes[id] = &AgentNode{Run: store.Run{ID: id, Goal: "agent goal " + id}, State: store.StateRunning,
			Own: runmodel.Counts{Steps: i, Tokens: int64(100 * i), Known: true}}
		guide := ""
		if i > 0 {
			guide = "├─ "
		}
		lines = append(lines, TreeLine{Guide: guide, Agent: id})
	}
	node := nodeMap(nodes)
	kept := NewTree(env)
	kept.SetNodes(node)
	selected := "1"
	draw := func(frame int, focused bool, w int) {
		t.Helper()
		fresh := NewTree(env)
		fresh.SetNodes(node)
		for _, p := range []*Tree{kept, fresh} {
			p.SetSize(w, 12)
			p.SetTree(lines, nil)
			p.Select(selected)
		}
		got, want := kept.View(focused), fresh.View(focused)
		if got != want {
			t.Fatalf("frame %d: the tree drawn with kept lines differs from one drawn afresh:\n%s\nwant:\n%s", frame, got, want)
		}
	}
	for frame := 0; frame < 40; frame++ {
		n := nodes[fmt.Sprint(frame%6+1)]
		switch frame % 5 {
		case 0:
			n.Own.Steps++
			n.Own.Tokens += 7
		case 1:
			n.State = store.StateWaiting
			n.Waiting, n.Marked = 1, true
		case 2:
			n.State, n.Run.Outcome = store.StateFinished, "succeeded"
		case 3:
			n.Todos = []store.Todo{{State: store.TodoDone}, {}}
		case 4:
			selected = n.Run.ID
		}
		draw(frame, frame%3 != 0, []int{60, 60, 90, 40}[frame%4])
	}
	if !strings.Contains(kept.View(true), "agent goal 1") {
		t.Fatal("the tree shows no agent")
	}
}

// nodeMap is nodes that never change.
type nodeMap map[string]*AgentNode

func (n nodeMap) Node(id string) *AgentNode { return n[id] }
func (n nodeMap) Rev() uint64               { return 0 }
