package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// writeStepsTrace is the canonical trace of a format that has none of its
// own, built from what every format answers: a line per step, in step
// order, in the record shape io-harness's trace has ("step N | tokens T |
// decision D | tool_call C | prompt P | result R"), so trace and diff read
// every format alike. A step's tool calls are its calls by name and
// arguments (never their ids, which differ between two runs of the same
// task); line breaks inside a field are written as \n so a record stays on
// its line. Fields are as the detail holds them (cut at MaxDetailBytes
// where the format cuts them).
func writeStepsTrace(ctx context.Context, src Source, runID string, w io.Writer) error {
	details, err := src.StepDetails(ctx, runID)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, d := range details {
		fmt.Fprintf(bw, "step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n",
			d.Number, d.Tokens, oneLine(d.Decision), oneLine(traceCalls(d)), oneLine(d.Prompt), oneLine(d.Result))
	}
	return bw.Flush()
}

// traceCalls is a step's tool calls as the trace names them: each call's
// name and arguments, in the order the model made them; the step's own
// tool_call text where the format records no calls.
func traceCalls(d StepDetail) string {
	if len(d.Tools) == 0 {
		if d.ToolCallFull != "" {
			return d.ToolCallFull
		}
		return d.ToolCall
	}
	calls := make([]string, len(d.Tools))
	for i, c := range d.Tools {
		calls[i] = c.Name + " " + c.Arguments
	}
	return strings.Join(calls, "; ")
}

var lineBreaks = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\n`)

func oneLine(s string) string { return lineBreaks.Replace(s) }
