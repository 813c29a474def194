package leviath

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
)

// StepDetail reads one row whole. Transcript text is not kept in memory:
// it is read back from the one frame that holds it (and checked against the
// fingerprint taken when the frame was folded).
//
//   - user message: Prompt is the message;
//   - assistant turn: TurnText is what the model wrote, ToolCallFull its
//     calls (one "name arguments" line each), ProviderCalls the calls
//     journaled for the turn, Observations the tool timings (HEAD);
//   - tool result: Result is the output, ToolCallFull the call it answers;
//   - status, restart and journal rows: Decision is the whole note.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.findFolded(ctx, runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	i := sort.Search(len(rs.rows), func(i int) bool { return rs.rows[i].id >= rowID })
	if i == len(rs.rows) || rs.rows[i].id != rowID {
		return store.StepDetail{}, newErr(s.path, store.ErrNoSuchRun, fmt.Sprintf("run %s has no step row %d", runID, rowID), nil)
	}
	r := &rs.rows[i]
	d := store.StepDetail{Step: stepOf(rs, r)}
	var fields []struct {
		name string
		p    *string
	}
	set := func(name string, p *string, v string) {
		*p = v
		fields = append(fields, struct {
			name string
			p    *string
		}{name, p})
	}
	// An entry's text is decoded no further than the detail shows.
	var partial []string
	setText := func(name string, p *string, v text) {
		s, whole := v.head(store.MaxDetailBytes + utf8.UTFMax)
		set(name, p, s)
		if !whole && len(s) <= store.MaxDetailBytes {
			*p = s + "…"
			partial = append(partial, name) // cut before the cap (a long frame's head)
		}
	}
	switch r.kind {
	case rowStatus, rowRestart, rowJournal:
		d.Decision = r.note
		return d, nil
	case rowMessage:
		_, m, err := s.readEntry(rs, r)
		if err != nil {
			return store.StepDetail{}, err
		}
		switch m.Role {
		case "assistant":
			setText("turn", &d.TurnText, m.Content)
			d.HasTurnText = true
		case "tool":
			setText("result", &d.Result, m.Content)
		default:
			setText("prompt", &d.Prompt, m.Content)
		}
	case rowUser:
		e, _, err := s.readEntry(rs, r)
		if err != nil {
			return store.StepDetail{}, err
		}
		setText("prompt", &d.Prompt, e.Content)
	case rowAssistant:
		e, _, err := s.readEntry(rs, r)
		if err != nil {
			return store.StepDetail{}, err
		}
		setText("turn", &d.TurnText, e.Content)
		d.HasTurnText = true
		var lines []string
		for _, c := range e.Kind.ToolCalls {
			lines = append(lines, strings.TrimSpace(c.Name+" "+string(c.Arguments)))
			d.Tools = append(d.Tools, store.ToolCall{ID: c.ID, Name: c.Name, Arguments: toolArgs(c.Arguments)})
			if o, ok := timingObs(rs, c.ID, c.Name); ok {
				d.Observations = append(d.Observations, o)
			}
		}
		set("tool call", &d.ToolCallFull, strings.Join(lines, "\n"))
		for j := range rs.calls {
			if rs.calls[j].step == r.number {
				d.ProviderCalls = append(d.ProviderCalls, callOf(rs, &rs.calls[j]))
			}
		}
	case rowResult:
		e, _, err := s.readEntry(rs, r)
		if err != nil {
			return store.StepDetail{}, err
		}
		setText("result", &d.Result, e.Content)
		if call, ok := s.callFor(rs, i, r.callID); ok {
			set("tool call", &d.ToolCallFull, call)
		}
		if o, ok := timingObs(rs, r.callID, r.name); ok {
			d.Observations = append(d.Observations, o)
		}
	}
	for _, f := range fields {
		if len(*f.p) > store.MaxDetailBytes {
			*f.p = cut(*f.p, store.MaxDetailBytes)
			d.Truncated = append(d.Truncated, f.name)
		}
	}
	d.Truncated = append(d.Truncated, partial...)
	d.ToolCall = d.ToolCallFull
	if d.ToolCall == "" {
		d.ToolCall = r.toolCall
	}
	return d, nil
}

// callFor finds the call a tool result answers, in the assistant rows
// before it.
func (s *Store) callFor(rs *runState, i int, id string) (string, bool) {
	if id == "" {
		return "", false
	}
	for j := i - 1; j >= 0; j-- {
		r := &rs.rows[j]
		if r.kind != rowAssistant {
			continue
		}
		for _, c := range r.calls {
			if c != id {
				continue
			}
			e, _, err := s.readEntry(rs, r)
			if err != nil {
				return "", false
			}
			for _, tc := range e.Kind.ToolCalls {
				if tc.ID == id {
					return strings.TrimSpace(tc.Name + " " + string(tc.Arguments)), true
				}
			}
		}
	}
	return "", false
}

// timingObs says when a tool call was dispatched and finished (HEAD).
func timingObs(rs *runState, id, name string) (store.Observation, bool) {
	t := rs.timing[id]
	if id == "" || t == nil || t.dispatched == 0 && t.done == 0 {
		return store.Observation{}, false
	}
	clock := func(sec int64) string { return unixTime(sec).Format("15:04:05 UTC") }
	var text string
	switch {
	case t.dispatched != 0 && t.done != 0:
		text = fmt.Sprintf("dispatched %s, finished %s (about %s; the journal keeps whole seconds)",
			clock(t.dispatched), clock(t.done), time.Duration(t.done-t.dispatched)*time.Second)
	case t.dispatched != 0:
		text = fmt.Sprintf("dispatched %s, not finished", clock(t.dispatched))
	default:
		text = "finished " + clock(t.done)
	}
	return store.Observation{Kind: "tool call", Target: strings.TrimSpace(orText(name, t.name) + " " + id), Text: text}, true
}

// readEntry reads back the entry (or message) a row was made from.
func (s *Store) readEntry(rs *runState, r *row) (*entrySnapshot, *messageRecord, error) {
	p := filepath.Join(rs.dir, "run.lvr")
	bad := func(why string) error {
		return newErr(p, store.ErrCorrupt, fmt.Sprintf("step row %d: %s; reopen the source", r.id, why), nil)
	}
	f, err := openFile(p)
	if err != nil {
		return nil, nil, statErr(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || inodeOf(fi) != rs.lvr.ino {
		return nil, nil, bad("run.lvr was replaced")
	}
	key := frameKeyOf(rs, fi, r.loc.off)
	if rec, ok := s.frames.get(key); ok {
		return s.entryOf(rec, r, bad)
	}
	var lb [8]byte
	if _, err := f.ReadAt(lb[:], r.loc.off); err != nil {
		return nil, nil, bad("cannot read its frame")
	}
	l := binary.BigEndian.Uint64(lb[:])
	if l > maxFrame {
		return nil, nil, bad("its frame has changed")
	}
	var payload []byte
	if l > skeletonFrames {
		// A long frame is streamed, its strings cut past what a detail shows.
		var skel bytes.Buffer
		skel.Grow(int(min(l, 2*(store.MaxDetailBytes+64)))) // a frame of one long content, without regrowing
		if err := skeleton(io.NewSectionReader(f, r.loc.off+8, int64(l)), int64(l), store.MaxDetailBytes+64, &skel); err != nil {
			return nil, nil, bad("cannot read its frame")
		}
		payload = skel.Bytes()
	} else {
		payload = make([]byte, l)
		if _, err := f.ReadAt(payload, r.loc.off+8); err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, bad("cannot read its frame")
		}
	}
	rec := new(runRecord)
	if v, _ := decodeFrame(payload, rec); v != frameOK {
		return nil, nil, bad("its frame has changed")
	}
	s.frames.put(key, rec, len(payload))
	return s.entryOf(rec, r, bad)
}

// entryOf is the entry (or message) of a decoded frame that row r was made
// from, checked against the fingerprint the fold took.
func (s *Store) entryOf(rec *runRecord, r *row, bad func(string) error) (*entrySnapshot, *messageRecord, error) {
	if rec.Message != nil {
		m := rec.Message.Message
		if fingerprint("Message", m.Role, m.Content.hash, nil, "") != r.fp {
			return nil, nil, bad("its frame has changed")
		}
		return nil, &m, nil
	}
	var entries []entrySnapshot
	ri, ei := int(r.loc.region), int(r.loc.entry)
	regionEntries := func(rsn []regionSnapshot) {
		if ri < len(rsn) {
			entries = rsn[ri].Entries
		}
	}
	deltaEntries := func(d []regionDelta) {
		if ri >= len(d) {
			return
		}
		switch {
		case d[ri].Set != nil:
			entries = d[ri].Set.Entries
		case d[ri].Append != nil:
			entries = d[ri].Append.Entries
		}
	}
	switch {
	case rec.ContextCheckpoint != nil:
		regionEntries(rec.ContextCheckpoint.Snapshot.Regions)
	case rec.Checkpoint != nil:
		regionEntries(rec.Checkpoint.Context.Regions)
	case rec.Progress != nil:
		deltaEntries(rec.Progress.Delta.Regions)
	case rec.ContextDiff != nil:
		deltaEntries(rec.ContextDiff.Delta.Regions)
	}
	if ei >= len(entries) || entryFP(&entries[ei]) != r.fp {
		return nil, nil, bad("its frame has changed")
	}
	return &entries[ei], nil, nil
}

// toolArgs is a call's arguments as the journal holds them, compacted and
// cut to MaxDetailBytes; "" for none.
func toolArgs(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		raw = b.Bytes()
	}
	return cut(string(raw), store.MaxDetailBytes)
}
