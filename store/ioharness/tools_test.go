package ioharness

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// TestToolCalls: step_turns.calls is read as the JSON io-harness writes;
// a store without it is read from the steps.tool_call summary, whose
// " | " separates calls only where a tool name and its colon follow.
func TestToolCalls(t *testing.T) {
	got := turnCalls(`[{"name":"read_file","arguments":{"path": "a.go"}},{"name":"exec","arguments":null},{"arguments":{}}]`)
	want := []store.ToolCall{{Name: "read_file", Arguments: `{"path":"a.go"}`}, {Name: "exec"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turnCalls: %+v, want %+v", got, want)
	}
	if got := turnCalls("not json"); got != nil {
		t.Errorf("turnCalls of garbage: %+v", got)
	}
	for _, c := range []struct {
		in   string
		want []store.ToolCall
	}{
		{"", nil},
		{`read_file:{"path":"a.go"}`, []store.ToolCall{{Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{`exec:{"cmd":"a | b"} | grep:{"pattern":"x"}`, []store.ToolCall{{Name: "exec", Arguments: `{"cmd":"a | b"}`}, {Name: "grep", Arguments: `{"pattern":"x"}`}}},
		{`exec:{"cmd":"a | b:c"}`, []store.ToolCall{{Name: "exec", Arguments: `{"cmd":"a | b:c"}`}}},
		{"no colon here", nil},
		{"bad name!:{}", nil},
	} {
		if got := summaryCalls(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("summaryCalls(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
	long := "x:" + strings.Repeat("é", store.MaxDetailBytes)
	if got := summaryCalls(long); len(got) != 1 || len(got[0].Arguments) > store.MaxDetailBytes || !strings.HasPrefix(got[0].Arguments, "é") {
		t.Errorf("a long call is not cut to MaxDetailBytes on a rune boundary")
	}
}
