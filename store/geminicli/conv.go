package geminicli

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// entry is one message of a conversation: the last line written for its id
// (the CLI re-appends a message as it completes), at the row of the first.
type entry struct {
	msg message
	row int64 // 1 + the byte offset of the line that first held it
	num int   // its turn number when it is a model turn, else 0
	// step is a model turn's timeline row (its RunID unset), made once
	// when the line is folded: a timeline read again does not decode
	// every result again.
	step *store.StepRow
}

// newEntry is an entry with its timeline row, when it is a full turn.
func newEntry(m message, row int64, num int, light bool) *entry {
	e := &entry{msg: m, row: row, num: num}
	if num > 0 && !light {
		r := stepRow("", e)
		e.step = &r
	}
	return e
}

// stepOf is the entry's timeline row in run runID.
func (e *entry) stepOf(runID string) store.StepRow {
	if e.step == nil {
		return stepRow(runID, e)
	}
	r := *e.step
	r.RunID = runID
	return r
}

// conv is a chat file folded as the CLI folds it when it loads a session
// (loadConversationRecord in packages/core/src/services/chatRecordingService.ts):
// the last line per message id wins and keeps the id's first place, a
// $set patches the header and, with a messages list, replaces the whole
// conversation (a checkpoint), and $rewindTo drops that message and every
// later one. A light conv keeps no message text or tool calls.
type conv struct {
	light                                    bool
	sessionID, kind, start, updated, summary string
	goal                                     string
	order                                    []string
	byID                                     map[string]*entry
	turns                                    int
	// reshaped is the offset of the newest checkpoint or rewind that
	// dropped messages already shown (-1: none).
	reshaped int64
}

func newConv(light bool) *conv {
	return &conv{light: light, byID: map[string]*entry{}, reshaped: -1}
}

// apply folds one line, written at byte offset off.
func (c *conv) apply(l *line, off int64) {
	switch {
	case l.Set != nil:
		if l.Set.LastUpdated != "" {
			c.updated = l.Set.LastUpdated
		}
		if l.Set.Summary != "" {
			c.summary = l.Set.Summary
		}
		if l.Set.Messages != nil {
			if len(c.order) > 0 {
				c.reshaped = off
			}
			c.order, c.byID, c.turns = nil, map[string]*entry{}, 0
			// Rows of a checkpoint's messages are inside its line: each
			// message is longer than a byte, so they stay apart from the
			// next line's row.
			for i, m := range *l.Set.Messages {
				if m.ID != "" && m.Type != "" {
					c.put(m, off+1+int64(i))
				}
			}
		}
	case l.RewindTo != nil:
		c.rewind(*l.RewindTo, off)
	case l.isMessage():
		c.put(l.message, off+1)
	case l.SessionID != "":
		c.sessionID, c.kind = l.SessionID, l.Kind
		if l.StartTime != "" {
			c.start = l.StartTime
		}
		if l.LastUpdated != "" {
			c.updated = l.LastUpdated
		}
	}
}

func (c *conv) put(m message, row int64) {
	if c.goal == "" && m.Type == "user" {
		if t := strings.TrimSpace(partsText(m.Content, false)); t != "" && !strings.HasPrefix(t, "<session_context>") {
			c.goal = t
		}
	}
	if m.Type == "gemini" {
		m.said = strings.TrimSpace(partsText(m.Content, false)) != ""
	}
	if c.light {
		m.Content, m.ToolCalls = nil, lightCalls(m.ToolCalls)
	}
	// Entries are replaced, never changed: a reader holding a snapshot of
	// them (entries) is not raced by a fold that goes on.
	if e, ok := c.byID[m.ID]; ok {
		c.byID[m.ID] = newEntry(m, e.row, e.num, c.light)
		return
	}
	num := 0
	if m.Type == "gemini" {
		c.turns++
		num = c.turns
	}
	c.byID[m.ID] = newEntry(m, row, num, c.light)
	c.order = append(c.order, m.ID)
}

// lightCalls keeps what a status needs of each call: its name and state.
func lightCalls(calls []toolCall) []toolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]toolCall, len(calls))
	for i, tc := range calls {
		out[i] = toolCall{ID: tc.ID, Name: tc.Name, Status: tc.Status}
	}
	return out
}

// rewind drops the message id and every later one; an id not there drops
// them all (as the CLI does).
func (c *conv) rewind(id string, off int64) {
	cut := 0
	for i, o := range c.order {
		if o == id {
			cut = i
			break
		}
	}
	if cut < len(c.order) {
		c.reshaped = off
	}
	for _, o := range c.order[cut:] {
		delete(c.byID, o)
	}
	c.order = c.order[:cut]
	c.turns = 0
	for _, o := range c.order {
		if e := c.byID[o]; e.msg.Type == "gemini" {
			c.turns++
			c.byID[o] = newEntry(e.msg, e.row, c.turns, c.light)
		}
	}
}

// last is the newest message (nil when there is none).
func (c *conv) last() *entry {
	if len(c.order) == 0 {
		return nil
	}
	return c.byID[c.order[len(c.order)-1]]
}

// entries are the messages in order.
func (c *conv) entries() []*entry {
	out := make([]*entry, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.byID[id])
	}
	return out
}
