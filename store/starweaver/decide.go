package starweaver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// DecidedBy is who vigil's decisions are recorded as decided by.
const DecidedBy = "vigil"

// now is the decision clock; tests fix it.
var now = time.Now

// Decide writes a decision the way Starweaver's own decide_approval does
// (docs/formats/starweaver.md, "Deciding") — status and decision set,
// updated_at moved, every other field kept in place — as a compare-and-set
// on the pending record inside one BEGIN IMMEDIATE transaction on a
// separate read-write connection. Before writing it refuses, with a
// *store.RefusedError, a run a resume claim holds (the resume has taken its
// decisions and will overwrite the records) and a run that has ended or
// been continued. A request someone else decided first comes back as Won
// false with what won. An approval is decided approve or deny (Text, when
// given, is the reason); a deferred tool (a Question) is answered with its
// result.
func (s *Store) Decide(ctx context.Context, d store.Decision) (res store.DecideResult, err error) {
	defer func() { s.write.Failed(s.read, err) }()
	switch d.Key.Kind {
	case store.Approval:
		if !d.Verdict.Allows(store.Approval) {
			return store.DecideResult{}, fmt.Errorf("an approval is decided with approve or deny, not %q", d.Verdict)
		}
	case store.Question:
	default:
		return store.DecideResult{}, errf(s.path, store.ErrUnsupported, nil, "%s not decided: Starweaver has no plans", d.Key)
	}
	db, err := s.writer()
	if err != nil {
		return store.DecideResult{}, err
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock=immediate)
	if err != nil {
		return store.DecideResult{}, mapErr(s.path, err)
	}
	defer tx.Rollback()
	if d.Key.Kind == store.Approval {
		res, err = s.decideApproval(ctx, tx, d)
	} else {
		res, err = s.completeDeferred(ctx, tx, d)
	}
	if err != nil {
		return store.DecideResult{}, mapErr(s.path, err)
	}
	if !res.Won {
		return res, nil
	}
	if err := tx.Commit(); err != nil {
		return store.DecideResult{}, mapErr(s.path, err)
	}
	return res, nil
}

// hitlRow is an approval or deferred row read inside the transaction.
type hitlRow struct {
	session, run string
	record       []byte
}

func loadHITL(ctx context.Context, tx *sql.Tx, table, idCol, id string) ([]hitlRow, error) {
	rows, err := tx.QueryContext(ctx, "SELECT session_id, run_id, record FROM "+table+" WHERE "+idCol+" = ?", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hitlRow
	for rows.Next() {
		var h hitlRow
		if err := rows.Scan(&h.session, &h.run, &h.record); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

func (s *Store) one(rows []hitlRow, k store.RequestKey) (hitlRow, error) {
	switch len(rows) {
	case 0:
		return hitlRow{}, errf(s.path, store.ErrNoSuchReq, nil, "no such request: %s", k)
	case 1:
		return rows[0], nil
	}
	return hitlRow{}, errf(s.path, store.ErrNoSuchReq, nil, "%s is ambiguous: %d rows carry that id", k, len(rows))
}

func (s *Store) decideApproval(ctx context.Context, tx *sql.Tx, d store.Decision) (store.DecideResult, error) {
	rows, err := loadHITL(ctx, tx, "approval_records", "approval_id", d.Key.ID)
	if err != nil {
		return store.DecideResult{}, err
	}
	h, err := s.one(rows, d.Key)
	if err != nil {
		return store.DecideResult{}, err
	}
	var a approvalRec
	if !decode(h.record, schemaApproval, true, &a) {
		return store.DecideResult{}, errf(s.path, store.ErrUnsupported, nil, "%s not decided: its record is not an approval record vigil can read", d.Key)
	}
	if a.Status != "pending" && a.Status != "" {
		res := store.DecideResult{Decision: verdictOf(a.Status)}
		if a.Decision != nil {
			res.DecidedBy = a.Decision.DecidedBy
		}
		return res, nil
	}
	if err := s.deliverable(ctx, tx, d.Key, h); err != nil {
		return store.DecideResult{}, err
	}
	if a.ActionName == "ask_user_question" && d.Verdict == store.VerdictApprove {
		return store.DecideResult{}, &store.RefusedError{Key: d.Key, Delivery: store.Deferred,
			Reason: "Starweaver refuses to approve an ask_user_question record: answer it in Starweaver"}
	}
	status := approvalStatus[d.Verdict]
	t := now()
	decision := orderedObject{}
	decision.set("status", jsonString(status), "")
	decision.set("decided_by", jsonString(DecidedBy), "")
	decision.set("decided_at", jsonString(formatTS(t, "Z")), "")
	if r := strings.TrimSpace(d.Text); r != "" {
		decision.set("reason", jsonString(r), "")
	}
	payload, err := rewrite(h.record, func(o *orderedObject) {
		o.set("status", jsonString(status), "")
		o.set("decision", decision.bytes(), "status")
		o.set("updated_at", jsonString(formatTS(t, "Z")), "")
		o.bump("revision")
	})
	if err != nil {
		return store.DecideResult{}, errf(s.path, store.ErrUnsupported, err, "%s not decided: %v", d.Key, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE approval_records SET record = ?, updated_at = ?
		WHERE session_id = ? AND run_id = ? AND approval_id = ? AND record = ?`,
		string(envelope(schemaApproval, payload)), formatTS(t, "+00:00"), h.session, h.run, d.Key.ID, string(h.record))
	if err != nil {
		return store.DecideResult{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.DecideResult{}, errf(s.path, store.ErrLocked, nil, "%s not decided: the record changed under the transaction", d.Key)
	}
	return store.DecideResult{Won: true, Decision: string(d.Verdict), DecidedBy: DecidedBy}, nil
}

func (s *Store) completeDeferred(ctx context.Context, tx *sql.Tx, d store.Decision) (store.DecideResult, error) {
	rows, err := loadHITL(ctx, tx, "deferred_tool_records", "deferred_id", d.Key.ID)
	if err != nil {
		return store.DecideResult{}, err
	}
	h, err := s.one(rows, d.Key)
	if err != nil {
		return store.DecideResult{}, err
	}
	var rec deferredRec
	if !decode(h.record, schemaDeferred, true, &rec) {
		return store.DecideResult{}, errf(s.path, store.ErrUnsupported, nil, "%s not decided: its record is not a deferred-tool record vigil can read", d.Key)
	}
	if !deferredOpen(rec.Status) {
		r := deferredRequest(reqRow{id: d.Key.ID, run: h.run}, &rec)
		return store.DecideResult{Decision: r.Decision}, nil
	}
	if err := s.deliverable(ctx, tx, d.Key, h); err != nil {
		return store.DecideResult{}, err
	}
	response := answerJSON(d.Text)
	t := now()
	payload, err := rewrite(h.record, func(o *orderedObject) {
		o.set("status", jsonString("completed"), "")
		o.set("response", response, "status")
		o.set("updated_at", jsonString(formatTS(t, "Z")), "")
		o.bump("revision")
	})
	if err != nil {
		return store.DecideResult{}, errf(s.path, store.ErrUnsupported, err, "%s not decided: %v", d.Key, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE deferred_tool_records SET record = ?, updated_at = ?
		WHERE session_id = ? AND run_id = ? AND deferred_id = ? AND record = ?`,
		string(envelope(schemaDeferred, payload)), formatTS(t, "+00:00"), h.session, h.run, d.Key.ID, string(h.record))
	if err != nil {
		return store.DecideResult{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.DecideResult{}, errf(s.path, store.ErrLocked, nil, "%s not decided: the record changed under the transaction", d.Key)
	}
	return store.DecideResult{Won: true, Decision: string(response), DecidedBy: DecidedBy}, nil
}

// answerJSON is an answer as the response Starweaver stores: the JSON it
// is, or the text as a JSON string.
func answerJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t != "" && json.Valid([]byte(t)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(t)) == nil {
			return b.Bytes()
		}
	}
	return jsonString(text)
}

// deliverable refuses a decision that would not reach the run: one a
// resume claim holds, or one that has ended or been continued.
func (s *Store) deliverable(ctx context.Context, tx *sql.Tx, k store.RequestKey, h hitlRow) error {
	claims, err := s.readClaims(ctx, tx, "WHERE session_id = ? AND run_id = ?", h.session, h.run)
	if err != nil {
		return err
	}
	if c, ok := claims[h.run]; ok {
		return &store.RefusedError{Key: k, Delivery: store.Deferred, Reason: claimReason(h.run, c, now())}
	}
	rows, err := tx.QueryContext(ctx, "SELECT rowid, session_id, run_id, record, '' FROM run_records WHERE session_id = ? AND (run_id = ? OR record LIKE ?)",
		h.session, h.run, `%"restore_from_run_id"%`+likeEscape(h.run)+`%`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var status, contBy string
	for rows.Next() {
		x, ok, err := scanRun(rows)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if x.rec.RunID == h.run {
			status = x.rec.Status
		} else if x.rec.RestoreFromRunID == h.run && contBy == "" {
			contBy = x.rec.RunID
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch {
	case status == "":
		return &store.RefusedError{Key: k, Delivery: store.Closed, Reason: fmt.Sprintf("run %s is not in the store", h.run)}
	case terminal(status):
		return &store.RefusedError{Key: k, Delivery: store.Closed, Reason: fmt.Sprintf("run %s has ended (%s)", h.run, status)}
	case contBy != "":
		return &store.RefusedError{Key: k, Delivery: store.Closed,
			Reason: fmt.Sprintf("run %s was continued by run %s, which already took its decisions", h.run, contBy)}
	}
	return nil
}

// envelope wraps a payload as Starweaver writes every record: compact,
// keys schema, version, payload. Approval and deferred records are
// version 1 in 0.7 and 0.15 alike; a legacy bare record comes back
// wrapped, as Starweaver's own rewrite does.
func envelope(schema string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":`)
	b.Write(jsonString(schema))
	b.WriteString(`,"version":1,"payload":`)
	b.Write(payload)
	b.WriteByte('}')
	return b.Bytes()
}

// rewrite applies edit to a record's payload, keeping every other field,
// its order and its bytes.
func rewrite(record []byte, edit func(*orderedObject)) ([]byte, error) {
	p, ok := unwrap(record, envelopeSchema(record), true)
	if !ok {
		return nil, errors.New("the record is not an envelope vigil can read")
	}
	o, err := parseObject(p)
	if err != nil {
		return nil, err
	}
	edit(o)
	return o.bytes(), nil
}

// envelopeSchema is the schema a record names (unwrap then checks it).
func envelopeSchema(record []byte) string {
	var env struct {
		Schema string `json:"schema"`
	}
	_ = json.Unmarshal(record, &env)
	return env.Schema
}

// orderedObject is a JSON object that keeps its keys in order, so a
// rewrite changes only what it means to (serde writes struct fields in
// declaration order).
type orderedObject struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(raw []byte) (*orderedObject, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the payload is not a JSON object")
	}
	o := &orderedObject{vals: map[string]json.RawMessage{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	return o, nil
}

// set gives k a value: in place when it exists, else right after the key
// after (or at the end).
func (o *orderedObject) set(k string, v json.RawMessage, after string) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; ok {
		o.vals[k] = v
		return
	}
	o.vals[k] = v
	for i, x := range o.keys {
		if x == after {
			o.keys = append(o.keys[:i+1], append([]string{k}, o.keys[i+1:]...)...)
			return
		}
	}
	o.keys = append(o.keys, k)
}

// bump increments an integer field that exists (0.15's revision).
func (o *orderedObject) bump(k string) {
	v, ok := o.vals[k]
	if !ok {
		return
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return
	}
	o.vals[k] = json.RawMessage(strconv.FormatInt(n+1, 10))
}

func (o *orderedObject) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(k))
		b.WriteByte(':')
		if err := json.Compact(&b, o.vals[k]); err != nil {
			b.Write(o.vals[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// jsonString encodes a string as serde_json does (no HTML escaping).
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// CarriesReason: an approval record keeps a deny's reason in its decision
// (decision.reason), which Starweaver hands the agent with the denial.
func (s *Store) CarriesReason(kind store.RequestKind, v store.Verdict) bool {
	return kind == store.Approval && v == store.VerdictDeny
}
