package views

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// What the open and copy keys hand to $PAGER, $EDITOR and the clipboard:
// the same text the panes show, made safe the same way, without the
// panes' cuts.

// openWidth is the width text opened in a pager is laid out for.
const openWidth = 100

// StepText is a step's detail as the step pane lays it out, as plain text.
func StepText(d *store.StepDetail) string {
	var b strings.Builder
	for _, l := range detailLines(d, openWidth) {
		b.WriteString(strings.TrimRight(plainText(l), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// StepPart is a piece of a step opened whole: laid-out text, or (Field
// set) a field the store writes whole in its place.
type StepPart struct {
	Text  string
	Field string // "result", "prompt", "tool call", "turn", an observation or edit (store.ObservationField, EditField)
}

// StepParts is StepText with each field cut to its head that the store can
// write whole (StepDetail.FieldBytes) left as a part of its own, for the
// opener to write from the store, made safe, after its heading.
func StepParts(d *store.StepDetail) []StepPart {
	var out []StepPart
	var b strings.Builder
	for _, l := range detailLinesFor(d, openWidth, detailOpts{wholeFields: true}) {
		t := plainText(l)
		if name, ok := strings.CutPrefix(t, fieldMark); ok {
			out = append(out, StepPart{Text: b.String()}, StepPart{Field: name})
			b.Reset()
			continue
		}
		b.WriteString(strings.TrimRight(t, " "))
		b.WriteByte('\n')
	}
	return append(out, StepPart{Text: b.String()})
}

// RequestText is a request as the queue shows it, whole, as plain text.
func RequestText(it ApprovalItem) string {
	head, content := describe(it, openWidth)
	var b strings.Builder
	for _, l := range append(head, content...) {
		b.WriteString(strings.TrimRight(plainText(l), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// RequestClip is what copying a request puts on the clipboard: the command
// an exec would run, the text a write would put on disk, the question, or
// the plan's steps.
func RequestClip(it ApprovalItem) string {
	r := it.Req
	switch r.Kind {
	case store.Approval:
		if r.HasContent && r.Act == "write" {
			return sanitize.Text(r.Content)
		}
		return sanitize.Text(r.Target)
	case store.Question:
		return sanitize.Text(r.Question)
	}
	var steps []string
	for _, s := range r.PlanSteps {
		steps = append(steps, sanitize.Line(s.Intent))
	}
	return strings.Join(steps, "\n")
}

// Detail is the step the detail pane shows (nil when none).
func (p *Detail) Detail() *store.StepDetail { return p.d }

// maxPrettyBytes bounds the arguments indented: a bigger call is shown as
// it is rather than parsed on every layout.
const maxPrettyBytes = 256 << 10

// prettyCall lays a tool call out for reading: each call of "name:{json}
// | name:{json}" on its own, its JSON arguments indented. A call whose
// arguments are not JSON is left as it is.
func prettyCall(call string) string {
	parts := strings.Split(call, " | ")
	out := make([]string, 0, len(parts))
	for _, part := range parts {
		name, args, ok := strings.Cut(part, ":")
		if !ok || len(args) > maxPrettyBytes || !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") && !strings.HasPrefix(strings.TrimSpace(args), "[") {
			out = append(out, part)
			continue
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(args), "", "  "); err != nil {
			out = append(out, part)
			continue
		}
		out = append(out, name+" "+buf.String())
	}
	return strings.Join(out, "\n")
}
