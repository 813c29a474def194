package store

import "testing"

// A step's calls are named by tool and arguments, never by id (two runs of
// one task get other ids), and a field's line breaks keep the record on
// its line.
func TestStepsTraceNamesCallsWithoutIDs(t *testing.T) {
	d := StepDetail{Step: Step{ToolCall: "cut summary"}, Tools: []ToolCall{
		{ID: "toolu_1", Name: "Bash", Arguments: `{"command":"echo hi"}`},
		{ID: "toolu_2", Name: "Read", Arguments: `{"path":"a"}`},
	}}
	if got, want := traceCalls(d), `Bash {"command":"echo hi"}; Read {"path":"a"}`; got != want {
		t.Errorf("traceCalls = %q, want %q", got, want)
	}
	d.Tools = nil
	d.ToolCallFull = "whole call"
	if got := traceCalls(d); got != "whole call" {
		t.Errorf("without calls: %q, want the step's own tool_call", got)
	}
	if got, want := oneLine("a\nb\r\nc\rd"), `a\nb\nc\nd`; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}
