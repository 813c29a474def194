// Package remote reads a store on another machine: `vigil ssh://host/path`
// runs `vigil agent --stdio --store PATH` there through the system ssh (so
// ~/.ssh/config, ProxyJump and the agent work), and the two speak a small
// JSON-lines protocol over its standard input and output that carries the
// store.Source calls. The agent tails the store with its own watcher and
// pushes a change notice; decisions are the remote store's own
// compare-and-set. When the link drops the store is offline, the client
// reconnects with back-off, and the reader resumes from the cursor it
// held: the agent started for the new link reads the changes after it.
//
// # Protocol (version 2; an agent also speaks 1)
//
// The agent speaks first, one line: {"hello":{"proto":2,"min_proto":1,
// "vigil":"…",…}} or {"error":"…"} when the store cannot be opened. The
// link speaks the highest version both ends know; an agent whose range
// does not meet the client's is refused with one line giving both. Then
// the client sends requests, {"id":N,"method":"Runs","params":{…}}, which
// the agent answers in any order, {"id":N,"result":…} or
// {"id":N,"error":{…}}; between answers the agent sends
// {"notice":"changed"} when its tail read something.
//
// A cursor is {"instance":…,"epoch":…,"seq":…,"token":…}. In version 1
// it is a position in one agent process's log of what its tail read
// (livetail.Hub), meaningless to another agent process: after a reconnect
// the reader loads the store again. Version 2 adds the token: the store's
// own cursor written down (store.CursorCodec), which any agent on the
// same store reads back, so a reader whose link dropped asks the new agent
// for Changes after its token and misses or doubles nothing. A token the
// store no longer matches (the store replaced or rewritten) answers
// {"changes":{"Reset":true},"note":"why"}. A format that cannot write its
// cursor down gets version 1's cursors. Version 2 also adds the method
// CanonicalTrace (vigil trace on an ssh:// store) and a decision's "by"
// (who decided, as the client's audit log names them: the far side's log
// records it beside the account ssh logged in as).
package remote

import (
	"encoding/json"
	"errors"

	"github.com/vigil-run/vigil/store"
)

// Proto is the highest protocol version this vigil speaks, MinProto the
// lowest. An agent whose versions do not meet these is refused with one
// line saying both.
const (
	Proto    = 2
	MinProto = 1
)

// protoResume is the first version whose cursors carry a token.
const protoResume = 2

// Hello is the agent's first line.
type Hello struct {
	Proto         int    `json:"proto"`
	MinProto      int    `json:"min_proto,omitempty"` // the lowest it speaks (absent: Proto alone)
	Vigil         string `json:"vigil"`               // the agent's vigil version
	Instance      string `json:"instance"`            // this agent process: cursors of another are refused
	Path          string `json:"path"`
	Format        string `json:"format"`
	ReadOnly      bool   `json:"read_only"`
	ReadOnlyWhy   string `json:"read_only_why,omitempty"`
	RecordsLeases bool   `json:"records_leases"`
	Activity      bool   `json:"activity"` // the store reads activity (store.ActivityReader)
	// RecentRuns says the agent answers RecentRuns (absent: an older
	// agent, asked Runs instead).
	RecentRuns bool `json:"recent_runs,omitempty"`
}

type helloLine struct {
	Hello *Hello `json:"hello,omitempty"`
	Error string `json:"error,omitempty"`
}

// request is one call.
type request struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// reply is an answer or a notice.
type reply struct {
	ID     int64           `json:"id,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
	Notice string          `json:"notice,omitempty"` // "changed", "gone"
	Reason string          `json:"reason,omitempty"`
}

// wireCursor is a cursor on the wire.
type wireCursor struct {
	Instance string `json:"instance"`
	Epoch    int    `json:"epoch"`
	Seq      int64  `json:"seq"`
	// Token is the store's cursor written down (version 2): any agent on
	// the same store resumes from it.
	Token json.RawMessage `json:"token,omitempty"`
}

// Params of the calls.
type (
	idsParams struct {
		IDs []string `json:"ids,omitempty"`
	}
	runParams struct {
		Run string `json:"run"`
		Row int64  `json:"row,omitempty"`
	}
	requestsParams struct {
		Unresolved bool     `json:"unresolved"`
		Runs       []string `json:"runs,omitempty"`
	}
	classifyParams struct {
		Req   store.Request `json:"req"`
		Run   store.Run     `json:"run"`
		Lease *store.Lease  `json:"lease,omitempty"`
		Now   int64         `json:"now"` // unix nanoseconds
	}
	classifyResult struct {
		Delivery store.Delivery `json:"delivery"`
		Why      string         `json:"why"`
	}
	// decideParams is a decision and who made it on the client's side
	// (its login and machine, as the far side's audit log records it: a
	// claim of the client's, the ssh login being the proof).
	decideParams struct {
		store.Decision
		By string `json:"by,omitempty"`
	}
	// recentParams asks for the newest runs (store.RecentRunner).
	recentParams struct {
		Limit int `json:"limit"`
	}
	recentResult struct {
		Runs []store.Run `json:"runs"`
		All  bool        `json:"all"`
	}
	changesResult struct {
		Changes *store.Changes `json:"changes"`
		Next    wireCursor     `json:"next"`
		Note    string         `json:"note,omitempty"` // why Reset, when it is
	}
)

// wireError carries a store error across: its sentinel by name, so
// errors.Is works on the far side, and a refusal whole.
type wireError struct {
	Kind     string           `json:"kind,omitempty"`
	Path     string           `json:"path,omitempty"`
	Message  string           `json:"message"`
	Refused  bool             `json:"refused,omitempty"`
	Key      store.RequestKey `json:"key,omitempty"`
	Reason   string           `json:"reason,omitempty"`
	Delivery store.Delivery   `json:"delivery,omitempty"`
}

var sentinels = map[string]error{
	"not-found": store.ErrNotFound, "is-directory": store.ErrIsDirectory, "not-sqlite": store.ErrNotSQLite,
	"corrupt": store.ErrCorrupt, "not-a-store": store.ErrNotAStore, "newer-format": store.ErrNewerFormat,
	"locked": store.ErrLocked, "read-only": store.ErrReadOnly, "exists": store.ErrExists,
	"no-such-run": store.ErrNoSuchRun, "no-such-request": store.ErrNoSuchReq, "unsupported": store.ErrUnsupported,
	"not-resumable": store.ErrNotResumable, "io": store.ErrIO,
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	var r *store.RefusedError
	if errors.As(err, &r) {
		w.Refused, w.Key, w.Reason, w.Delivery = true, r.Key, r.Reason, r.Delivery
		return w
	}
	for name, s := range sentinels {
		if errors.Is(err, s) {
			w.Kind = name
			break
		}
	}
	return w
}

// remoteError is an error the agent returned: its message whole, and the
// sentinel it matched there.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Is(t error) bool {
	return e.kind != nil && t == e.kind
}

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	if w.Refused {
		return &store.RefusedError{Key: w.Key, Reason: w.Reason, Delivery: w.Delivery}
	}
	return &remoteError{msg: w.Message, kind: sentinels[w.Kind]}
}
