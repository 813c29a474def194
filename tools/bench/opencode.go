package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ocHistory is an opencode database of months: Sessions sessions, each the
// real CLI's (the db-export internal/testkit/agentcli recorded from
// opencode 1.18 driven by the test model server: a session that hands a
// task to a sub-agent session) written again into opencode's own schema
// with fresh ids, session n starting n hours into the history, its title
// numbered ("session n: …"). Each session's assistant turns are repeated
// until its message and part rows take Bytes of the file (their data and
// rowBytes each; BigBytes for Big of them, half among the newest, half
// spread over the history), each copy with its own ids and later times; a session's times are pressed into 50 minutes
// when its turns would take longer.
type ocHistory struct {
	Sessions, Big   int
	Bytes, BigBytes int64
}

// opencodeHistory is issue 30's opencode database: 2 000 sessions, 2 GB.
var opencodeHistory = ocHistory{Sessions: 2000, Big: 8, Bytes: 200 << 10, BigBytes: 200 << 20}

// rowBytes is what a message or part row takes in the file beside its
// data: its ids and times, and its entries in opencode's indexes.
const rowBytes = 300

func (h ocHistory) String() string {
	return fmt.Sprintf("opencode history, %s sessions, %d of %d MB", count(h.Sessions), h.Big, h.BigBytes>>20)
}

func (h ocHistory) dir() string {
	return fmt.Sprintf("opencode-s%d-b%d-%d-%d-v1", h.Sessions, h.Big, h.Bytes, h.BigBytes)
}

// opencodeSchema is opencode 1.18.33's DDL as that version created its
// database, and opencodeExport the real run the history replicates.
const (
	opencodeSchema = "store/opencode/testdata/schema-1.18.33.sql"
	opencodeExport = "fixtures/agents/opencode/db-export/subagent-run.jsonl"
)

// opencodePath returns the database of a history under dir, building it
// first when there is none (a ".done" file marks a finished build).
func opencodePath(dir string, h ocHistory, log func(string, ...any)) (string, error) {
	root := filepath.Join(dir, h.dir())
	db := filepath.Join(root, "opencode.db")
	if _, err := os.Stat(root + ".done"); err == nil {
		return db, nil
	}
	os.RemoveAll(root)
	mod, err := moduleRoot()
	if err != nil {
		return "", err
	}
	schema, err := os.ReadFile(filepath.Join(mod, opencodeSchema))
	if err != nil {
		return "", err
	}
	export, err := os.ReadFile(filepath.Join(sharedDir(), opencodeExport))
	if err != nil {
		return "", fmt.Errorf("the opencode history is built from the real CLI's db-export: %w (set $VIGIL_SHARED)", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	log("building %s (%s) once; it is cached for the next run", h, db)
	if err := buildOpencode(db, h, string(schema), export); err != nil {
		return "", fmt.Errorf("building %s: %w", db, err)
	}
	log("built %s in %s", h, time.Since(start).Round(time.Second))
	return db, os.WriteFile(root+".done", nil, 0o644)
}

// moduleRoot is the checkout the bench runs from (the directory of go.mod
// at or above the working directory).
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("the bench runs inside vigil's checkout (no go.mod above the working directory)")
		}
		d = up
	}
}

// buildOpencode makes opencode's schema from its DDL, then generates the
// history's rows inside C SQLite (the sqlite3 CLI, else python3's sqlite3)
// from the export's: every session row, message and part is one
// expression over (session n, repeat r), the rows inserted in the order
// opencode writes them (session by session, a turn's message before its
// parts, by time).
func buildOpencode(path string, h ocHistory, schema string, export []byte) error {
	tpl, err := readExport(export)
	if err != nil {
		return err
	}
	return runSQL(path, tpl.script(h, schema))
}

// ocRow is one row of the export, its columns in order.
type ocRow struct {
	table string
	cols  []string
	vals  map[string]any // string, json.Number, nil, or raw JSON text (an object)
	k     int            // its place among its table's rows, from 1
	rep   bool           // one of the root's assistant turns, repeated to grow a session
}

func (r *ocRow) str(c string) string { s, _ := r.vals[c].(string); return s }

func (r *ocRow) num(c string) int64 {
	n, _ := r.vals[c].(json.Number).Int64()
	return n
}

// ocTemplate is the export read for replication.
type ocTemplate struct {
	sessions, messages, parts []*ocRow
	byID                      map[string]*ocRow
	root                      *ocRow
	t0, span                  int64 // the root's start; a repeat's length (ms)
	last                      int64 // the latest time in the export
	once, each                int64 // bytes of message and part rows: all, the repeated ones
}

// readExport reads the export's session, message and part rows (its
// event rows are opencode's sync log, which vigil does not read).
func readExport(export []byte) (*ocTemplate, error) {
	t := &ocTemplate{byID: map[string]*ocRow{}}
	for _, line := range bytes.Split(export, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Table string          `json:"table"`
			Row   json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, err
		}
		if rec.Table != "session" && rec.Table != "message" && rec.Table != "part" {
			continue
		}
		r, err := orderedRow(rec.Row)
		if err != nil {
			return nil, err
		}
		r.table = rec.Table
		switch r.table {
		case "session":
			t.sessions = append(t.sessions, r)
			r.k = len(t.sessions)
			if r.vals["parent_id"] == nil {
				t.root = r
			}
		case "message":
			t.messages = append(t.messages, r)
			r.k = len(t.messages)
		case "part":
			t.parts = append(t.parts, r)
			r.k = len(t.parts)
		}
		t.byID[r.str("id")] = r
	}
	if t.root == nil || len(t.sessions) != 2 || len(t.messages) == 0 {
		return nil, errors.New("the export is not one session with its sub-agent")
	}
	t.t0 = t.root.num("time_created")
	from := int64(-1)
	for _, m := range t.messages {
		var d struct {
			Role string `json:"role"`
		}
		json.Unmarshal([]byte(m.vals["data"].(string)), &d)
		if m.str("session_id") == t.root.str("id") && d.Role == "assistant" {
			m.rep = true
			if from < 0 || m.num("time_created") < from {
				from = m.num("time_created")
			}
		}
	}
	for _, p := range t.parts {
		p.rep = t.byID[p.str("message_id")].rep
	}
	to := int64(0)
	for _, r := range append(append(append([]*ocRow{}, t.sessions...), t.messages...), t.parts...) {
		size := int64(len(r.str("data"))) + rowBytes
		for _, c := range r.cols {
			for _, ms := range t.times(r, c) {
				t.last = max(t.last, ms)
				if r.rep {
					to = max(to, ms)
				}
			}
		}
		if r.table != "session" {
			t.once += size
			if r.rep {
				t.each += size
			}
		}
	}
	if from < 0 || t.each == 0 {
		return nil, errors.New("the export's root session has no assistant turn to repeat")
	}
	t.span = to - from + 100
	return t, nil
}

// orderedRow decodes a row object keeping its columns' order; an object
// value (a data column) is kept as compact JSON text, as opencode stores it.
func orderedRow(raw []byte) (*ocRow, error) {
	r := &ocRow{vals: map[string]any{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var val any
		switch {
		case bytes.HasPrefix(v, []byte("{")) || bytes.HasPrefix(v, []byte("[")):
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, err
			}
			val = b.String()
		default:
			d := json.NewDecoder(bytes.NewReader(v))
			d.UseNumber()
			if err := d.Decode(&val); err != nil {
				return nil, err
			}
		}
		r.cols = append(r.cols, k.(string))
		r.vals[k.(string)] = val
	}
	return r, nil
}

// epochMillis is a time in the export: 13 digits.
var epochMillis = regexp.MustCompile(`\b1\d{12}\b`)

// times are the export's times in a column: its value, or the epoch
// milliseconds within an hour of the run written in its JSON text.
func (t *ocTemplate) times(r *ocRow, c string) []int64 {
	switch v := r.vals[c].(type) {
	case json.Number:
		if strings.HasPrefix(c, "time_") {
			n, _ := v.Int64()
			return []int64{n}
		}
	case string:
		var out []int64
		for _, m := range epochMillis.FindAllString(v, -1) {
			if n, _ := strconv.ParseInt(m, 10, 64); t.near(n) {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

func (t *ocTemplate) near(ms int64) bool {
	return ms > t.root.num("time_created")-3_600_000 && ms < t.root.num("time_created")+3_600_000
}

// at is the SQL for an export time ms in session p, repeat r: the
// session's start, plus the time since the run began and r repeats,
// pressed by the session's scale.
func (t *ocTemplate) at(ms int64, r string) string {
	return fmt.Sprintf("(p.start + CAST(((%d) + %s*%d) * p.scale AS INTEGER))", ms-t.t0, r, t.span)
}

// idOf is the SQL for a row's fresh id: opencode's shape (prefix, 12 hex
// digits of its creation time in ms ·4096 plus a counter, descending for
// sessions, then 14 random base62 characters, kept), the time moved as the
// row's, the counter the row's place, so ids sort as the rows were made.
func (t *ocTemplate) idOf(r *ocRow, rep string) string {
	id := r.str("id")
	prefix, rest, _ := strings.Cut(id, "_")
	tail := rest[min(12, len(rest)):]
	v := fmt.Sprintf("(%s*4096 + %d)", t.at(r.num("time_created"), rep), r.k)
	if r.table == "session" {
		v = "(~" + v + ")"
	}
	return fmt.Sprintf("('%s_' || printf('%%012x', %s & 281474976710655) || %s)", prefix, v, sqlQuote(tail))
}

// refRep is the repeat a reference to row id means from a row of repeat r:
// the same repeat for a repeated row, else the one written once.
func (t *ocTemplate) refRep(id string) string {
	if t.byID[id].rep {
		return "q.r"
	}
	return "0"
}

// text is the SQL for a text column: its ids and times replaced.
var exportRef = regexp.MustCompile(`\b(ses|msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}\b|\b1\d{12}\b`)

func (t *ocTemplate) text(s string, rep string) string {
	var b strings.Builder
	b.WriteString("(''")
	last := 0
	for _, m := range exportRef.FindAllStringIndex(s, -1) {
		tok := s[m[0]:m[1]]
		var expr string
		if ref, ok := t.byID[tok]; ok {
			expr = t.idOf(ref, t.refRep(tok))
		} else if n, _ := strconv.ParseInt(tok, 10, 64); n > 0 && t.near(n) {
			expr = t.at(n, rep)
		} else {
			continue
		}
		fmt.Fprintf(&b, " || %s || %s", sqlQuote(s[last:m[0]]), expr)
		last = m[1]
	}
	fmt.Fprintf(&b, " || %s)", sqlQuote(s[last:]))
	return b.String()
}

// column is the SQL for one column of a copy of row r.
func (t *ocTemplate) column(r *ocRow, c string) string {
	rep := "q.r"
	if r.table == "session" {
		rep = "0"
	}
	isRoot := r == t.root
	switch v := r.vals[c].(type) {
	case nil:
		return "NULL"
	case json.Number:
		n, _ := v.Int64()
		switch {
		case c == "time_updated" && isRoot:
			return t.at(n, "p.reps")
		case strings.HasPrefix(c, "time_"):
			return t.at(n, rep)
		case strings.HasPrefix(c, "tokens_") && isRoot:
			return fmt.Sprintf("(%s * (1 + p.reps))", v)
		}
		return v.String()
	case string:
		switch {
		case c == "id":
			return t.idOf(r, rep)
		case c == "title" && isRoot:
			return fmt.Sprintf("('session ' || p.n || ': ' || %s)", sqlQuote(v))
		case t.byID[v] != nil:
			return t.idOf(t.byID[v], t.refRep(v))
		}
		return t.text(v, rep)
	}
	return "NULL"
}

// insert is the statement that writes every copy of a table's rows: the
// loops run session, repeat, row (CROSS JOIN keeps SQLite to that order),
// so rowids follow the order opencode writes in.
func (t *ocTemplate) insert(table string, rows []*ocRow) string {
	cols := rows[0].cols
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s)\nSELECT", table, strings.Join(cols, ", "))
	for i, c := range cols {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  CASE t.k")
		for _, r := range rows {
			fmt.Fprintf(&b, " WHEN %d THEN %s", r.k, t.column(r, c))
		}
		b.WriteString(" END")
	}
	if table == "session" {
		fmt.Fprintf(&b, "\nFROM plan p CROSS JOIN tpl_%s t;\n", table)
	} else {
		fmt.Fprintf(&b, "\nFROM plan p CROSS JOIN reps q CROSS JOIN tpl_%s t WHERE q.r <= p.reps AND (q.r = 0 OR t.rep);\n", table)
	}
	return b.String()
}

// script is the SQL that makes the history: opencode's schema, the plan
// (each session's start, repeats and scale), the rows; filled in rollback
// mode, then put in WAL as opencode keeps its database.
func (t *ocTemplate) script(h ocHistory, schema string) string {
	var b strings.Builder
	b.WriteString("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=OFF;\nPRAGMA cache_size=-65536;\n")
	b.WriteString(schema)
	b.WriteString("\nBEGIN;\nCREATE TEMP TABLE plan (n INTEGER PRIMARY KEY, start INTEGER, reps INTEGER, scale REAL);\n")
	big := bigSessions(h.Sessions, h.Big)
	most := 0
	for n := 1; n <= h.Sessions; n++ {
		size := h.Bytes
		if big[n] {
			size = h.BigBytes
		}
		reps := int(max(0, (size-t.once+t.each-1)/t.each))
		most = max(most, reps)
		// A session fits in 50 minutes of its hour.
		scale := min(1, 3_000_000/float64(t.last-t.t0+int64(reps)*t.span))
		start := historyStart.Add(time.Duration(n) * time.Hour).UnixMilli()
		fmt.Fprintf(&b, "INSERT INTO plan VALUES (%d, %d, %d, %g);\n", n, start, reps, scale)
	}
	fmt.Fprintf(&b, `CREATE TEMP TABLE reps (r INTEGER PRIMARY KEY);
WITH RECURSIVE n(r) AS (SELECT 0 UNION ALL SELECT r+1 FROM n WHERE r < %d) INSERT INTO reps SELECT r FROM n;
`, most)
	for _, tb := range []struct {
		name string
		rows []*ocRow
	}{{"session", t.sessions}, {"message", t.messages}, {"part", t.parts}} {
		fmt.Fprintf(&b, "CREATE TEMP TABLE tpl_%s (k INTEGER PRIMARY KEY, rep INTEGER);\n", tb.name)
		for _, r := range tb.rows {
			rep := 0
			if r.rep {
				rep = 1
			}
			fmt.Fprintf(&b, "INSERT INTO tpl_%s VALUES (%d, %d);\n", tb.name, r.k, rep)
		}
		b.WriteString(t.insert(tb.name, tb.rows))
	}
	b.WriteString("COMMIT;\nPRAGMA journal_mode=WAL;\n")
	return b.String()
}
