package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

func canonicalTrace(ctx context.Context, src store.Source, runIDs ...string) ([]string, error) {
	var out []string
	for _, id := range runIDs {
		if err := knownRun(ctx, src, id); err != nil {
			return nil, err
		}
		tr, err := store.CanonicalTrace(ctx, src, id)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// knownRun says no such run unless the store has id.
func knownRun(ctx context.Context, src store.Source, id string) error {
	if _, err := src.Run(ctx, id); err != nil {
		if errors.Is(err, store.ErrNoSuchRun) {
			return noSuchRun(src, id)
		}
		return err
	}
	return nil
}

func (a *app) trace(ctx context.Context, s *session, id string, raw bool) error {
	// Written as it is read: a trace with a 200 MB result is not held.
	// (Several stores write one: each run's store says whether it can.)
	if err := knownRun(ctx, s.src, id); err != nil {
		return err
	}
	if raw {
		return s.src.WriteCanonicalTrace(ctx, id, a.stdout)
	}
	w := sanitize.TextWriter(a.out())
	if err := s.src.WriteCanonicalTrace(ctx, id, w); err != nil {
		return err
	}
	return w.Close()
}

// traceRecord is one record of a canonical trace: a step row or a context
// event. A record can span lines (prompts and results hold line breaks).
type traceRecord struct {
	kind   string // "step" or "context"
	step   int
	text   string
	fields [][2]string // a step row's fields, in trace order
}

// recordStart matches the start of a record. A prompt or result line that
// happens to look the same would split a record: the comparison then still
// finds the runs differ or agree, only the split is off.
var recordStart = regexp.MustCompile(`(?m)^(step (\d+) \| tokens |context (\d+) \| )`)

var stepFields = []string{"tokens", "decision", "tool_call", "prompt", "result"}

func parseTrace(tr string) []traceRecord {
	idx := recordStart.FindAllStringSubmatchIndex(tr, -1)
	var out []traceRecord
	for i, m := range idx {
		end := len(tr)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		text := strings.TrimSuffix(tr[m[0]:end], "\n")
		r := traceRecord{text: text}
		if m[4] >= 0 {
			r.kind = "step"
			r.step, _ = strconv.Atoi(tr[m[4]:m[5]])
			r.fields = splitStepFields(text)
		} else {
			r.kind = "context"
			r.step, _ = strconv.Atoi(tr[m[6]:m[7]])
		}
		out = append(out, r)
	}
	return out
}

// splitStepFields splits "step N | tokens T | decision D | tool_call C |
// prompt P | result R" into its named fields.
func splitStepFields(text string) [][2]string {
	var out [][2]string
	rest := text
	for i, name := range stepFields {
		marker := name + " "
		if i > 0 {
			marker = " | " + marker
		}
		at := strings.Index(rest, marker)
		if at < 0 {
			return nil
		}
		if i > 0 {
			out[i-1][1] = rest[:at]
		}
		rest = rest[at+len(marker):]
		out = append(out, [2]string{name, ""})
	}
	out[len(out)-1][1] = rest
	return out
}

// stepRecords groups a trace's records by step number.
func stepRecords(recs []traceRecord) map[int][]traceRecord {
	out := map[int][]traceRecord{}
	for _, r := range recs {
		out[r.step] = append(out[r.step], r)
	}
	return out
}

// diffFields are the fields diff compares, in trace order: a step row's,
// then its context events.
var diffFields = append(append([]string{}, stepFields...), "context")

// parseFields reads --fields: names from diffFields, comma-separated; none
// means every field.
func parseFields(list []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range list {
		for _, name := range strings.Split(f, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(diffFields, name) {
				return nil, usagef("unknown field %q for --fields (the fields are %s)", name, strings.Join(diffFields, ", "))
			}
			out[name] = true
		}
	}
	if len(out) == 0 {
		for _, f := range diffFields {
			out[f] = true
		}
	}
	return out, nil
}

// diff prints two runs' canonical traces aligned by step and, inside a
// field, by line. It ends with exit 1 when the fields compared differ, as
// diff(1) does.
func (a *app) diff(ctx context.Context, s *session, idA, idB string, fieldList []string) error {
	fields, err := parseFields(fieldList)
	if err != nil {
		return err
	}
	trs, err := canonicalTrace(ctx, s.src, idA, idB)
	if err != nil {
		return err
	}
	w := a.out()
	all := len(fields) == len(diffFields)
	scope := ""
	if !all {
		var names []string
		for _, f := range diffFields {
			if fields[f] {
				names = append(names, f)
			}
		}
		scope = " in " + strings.Join(names, ", ")
	}
	identical := func() error {
		n := 0
		for _, r := range parseTrace(trs[0]) {
			if r.kind == "step" {
				n++
			}
		}
		if scope != "" {
			fmt.Fprintf(w, "identical%s: runs %s and %s agree%s at every step (%d step rows in run %s)\n", scope, clean(idA), clean(idB), scope, n, clean(idA))
			return nil
		}
		fmt.Fprintf(w, "identical: runs %s and %s have the same canonical trace (%d step rows)\n", clean(idA), clean(idB), n)
		return nil
	}
	if trs[0] == trs[1] {
		return identical()
	}
	recA, recB := stepRecords(parseTrace(trs[0])), stepRecords(parseTrace(trs[1]))
	var steps []int
	for n := range recA {
		steps = append(steps, n)
	}
	for n := range recB {
		if _, ok := recA[n]; !ok {
			steps = append(steps, n)
		}
	}
	sort.Ints(steps)

	var body strings.Builder
	first := ""
	same := 0
	flushSame := func() {
		if same > 0 {
			fmt.Fprintf(&body, "= %d identical step(s)\n", same)
			same = 0
		}
	}
	for _, n := range steps {
		hunk, what := diffStep(recA[n], recB[n], idA, idB, fields)
		if hunk == "" {
			same++
			continue
		}
		flushSame()
		mark := ""
		if strings.HasPrefix(what, "only in ") {
			mark = "  " + what
		}
		if first == "" {
			first = fmt.Sprintf("step %d (%s)", n, what)
			mark += "  <- first divergence"
		}
		fmt.Fprintf(&body, "@@ step %d @@%s\n", n, mark)
		body.WriteString(hunk)
	}
	flushSame()
	if first == "" {
		if !all {
			return identical() // they differ only in fields not compared
		}
		// The traces differ only where the record split cannot see it.
		first = "the traces differ outside any step record"
	}
	fmt.Fprintf(w, "--- run %s\n+++ run %s\n", clean(idA), clean(idB))
	fmt.Fprintf(w, "first divergence: %s\n", first)
	if _, err := io.WriteString(w, body.String()); err != nil {
		return err
	}
	return &exitStatus{ExitError}
}

// diffStep compares one step's records in the fields asked for; it returns
// "" when they agree, else the hunk and what differs (field names in trace
// order).
func diffStep(a, b []traceRecord, idA, idB string, fields map[string]bool) (string, string) {
	if recordsEqual(a, b) {
		return "", ""
	}
	var h strings.Builder
	switch {
	case len(a) == 0:
		summary(&h, "+ ", b, fields)
		return h.String(), "only in run " + clean(idB)
	case len(b) == 0:
		summary(&h, "- ", a, fields)
		return h.String(), "only in run " + clean(idA)
	}
	sa, ca := split(a)
	sb, cb := split(b)
	var what []string
	note := func(s string) {
		if !slices.Contains(what, s) {
			what = append(what, s)
		}
	}
	for i := 0; i < max(len(sa), len(sb)); i++ {
		switch {
		case i >= len(sb):
			summary(&h, "- ", sa[i:i+1], fields)
			note("a step row only in run " + clean(idA))
		case i >= len(sa):
			summary(&h, "+ ", sb[i:i+1], fields)
			note("a step row only in run " + clean(idB))
		case sa[i].text != sb[i].text:
			if sa[i].fields == nil || sb[i].fields == nil {
				fieldDiff(&h, "step row", sa[i].text, sb[i].text)
				note("step row")
				continue
			}
			for f := range sa[i].fields {
				name, va, vb := sa[i].fields[f][0], sa[i].fields[f][1], sb[i].fields[f][1]
				if va == vb || !fields[name] {
					continue
				}
				note(name)
				fieldDiff(&h, name, va, vb)
			}
		}
	}
	if fields["context"] && !recordsEqual(ca, cb) {
		note("context")
		fieldDiff(&h, "context", recordsText(ca), recordsText(cb))
	}
	return h.String(), strings.Join(what, ", ")
}

func recordsEqual(a, b []traceRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].text != b[i].text {
			return false
		}
	}
	return true
}

func split(recs []traceRecord) (steps, context []traceRecord) {
	for _, r := range recs {
		if r.kind == "step" {
			steps = append(steps, r)
		} else {
			context = append(context, r)
		}
	}
	return steps, context
}

// recordsText is records one after another, each on its own lines.
func recordsText(recs []traceRecord) string {
	var parts []string
	for _, r := range recs {
		parts = append(parts, r.text)
	}
	return strings.Join(parts, "\n")
}

// summary writes the records one run alone has: each field asked for, a
// field of several lines as its first line and how many more there are (a
// prompt is hundreds of lines; there is nothing to align it with).
func summary(w *strings.Builder, prefix string, recs []traceRecord, fields map[string]bool) {
	for _, r := range recs {
		if r.kind != "step" || r.fields == nil {
			if fields["context"] || r.kind == "step" {
				shortField(w, prefix, r.kind, r.text)
			}
			continue
		}
		for _, f := range r.fields {
			if fields[f[0]] {
				shortField(w, prefix, f[0], f[1])
			}
		}
	}
}

// shortField writes a field's first line, and how many lines follow it.
func shortField(w *strings.Builder, prefix, name, value string) {
	ls := strings.Split(sanitize.Text(value), "\n")
	line := prefix + name + ": " + ls[0]
	if len(ls) > 1 {
		line += fmt.Sprintf(" … (%d more lines)", len(ls)-1)
	}
	w.WriteString(line + "\n")
}

// diffContext is how many unchanged lines a field's hunk keeps around a
// change.
const diffContext = 3

// fieldDiff writes how one field differs: both values whole when each is
// a single line, else a line-level diff of the two, as unified hunks
// ("  name @@ -12,7 +12,8 @@", then context lines indented, removed lines
// "- ", added lines "+ ").
func fieldDiff(w *strings.Builder, name, va, vb string) {
	if !strings.Contains(va, "\n") && !strings.Contains(vb, "\n") {
		field(w, "- ", name, va)
		field(w, "+ ", name, vb)
		return
	}
	// Both end in a line break, so no hunk speaks of a missing one.
	va, vb = va+"\n", vb+"\n"
	u, err := udiff.ToUnifiedDiff("a", "b", va, udiff.Lines(va, vb), diffContext)
	if err != nil || len(u.Hunks) == 0 {
		field(w, "- ", name, va)
		field(w, "+ ", name, vb)
		return
	}
	for _, hk := range u.Hunks {
		from, to := 0, 0
		for _, l := range hk.Lines {
			switch l.Kind {
			case udiff.Delete:
				from++
			case udiff.Insert:
				to++
			default:
				from++
				to++
			}
		}
		fmt.Fprintf(w, "  %s @@ -%s +%s @@\n", name, lineRange(hk.FromLine, from), lineRange(hk.ToLine, to))
		for _, l := range hk.Lines {
			prefix := "  "
			switch l.Kind {
			case udiff.Delete:
				prefix = "- "
			case udiff.Insert:
				prefix = "+ "
			}
			w.WriteString(prefix + sanitize.Line(strings.TrimSuffix(l.Content, "\n")) + "\n")
		}
	}
}

// lineRange is a hunk's "start,count" in diff(1)'s form.
func lineRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	if n == 0 {
		return strconv.Itoa(max(start-1, 0)) + ",0"
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// field writes one field, continuation lines indented under its value.
func field(w *strings.Builder, prefix, name, value string) {
	ls := strings.Split(sanitize.Text(value), "\n")
	fmt.Fprintf(w, "%s%s: %s\n", prefix, name, ls[0])
	pad := strings.Repeat(" ", len(name)+2)
	for _, l := range ls[1:] {
		w.WriteString(prefix + pad + l + "\n")
	}
}
