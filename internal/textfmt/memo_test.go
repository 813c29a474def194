package textfmt

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/charmbracelet/x/ansi"
)

// TestMemoAnswersAsMeasured: a remembered width, fit or cut is what
// measuring gives, the first time and every time after, and the memory
// stays within two generations however many strings pass.
func TestMemoAnswersAsMeasured(t *testing.T) {
	lines := []string{"● running · 字字 wide", "\x1b[1m✓ bold\x1b[m and plain", "é\u0301 combining ─────", "short ✗"}
	for round := 0; round < 3; round++ {
		for _, l := range lines {
			if got, want := Width(l), ansi.StringWidth(l); got != want {
				t.Errorf("round %d: Width(%q) = %d, want %d", round, l, got, want)
			}
			for _, w := range []int{3, 10, 40} {
				if got, want := Fit(l, w), fit(l, w); got != want {
					t.Errorf("round %d: Fit(%q, %d) = %q, want %q", round, l, w, got, want)
				}
				if got := ansi.StringWidth(Fit(l, w)); got != w {
					t.Errorf("Fit(%q, %d) is %d cells", l, w, got)
				}
				want := l
				if ansi.StringWidth(l) > w {
					want = ansi.Truncate(l, w, "…")
				}
				if got := Cut(l, w); got != want {
					t.Errorf("round %d: Cut(%q, %d) = %q, want %q", round, l, w, got, want)
				}
			}
		}
	}
	for i := 0; i < 3*memoCap; i++ {
		Width(fmt.Sprintf("● line %d", i))
	}
	widths.mu.Lock()
	n := len(widths.cur) + len(widths.old)
	widths.mu.Unlock()
	if n > 2*memoCap {
		t.Errorf("the width memo holds %d answers, more than two generations of %d", n, memoCap)
	}
	if got := Width("● line 0"); got != 8 {
		t.Errorf("a width forgotten and measured again: %d, want 8", got)
	}
}

// TestMemoHoldsFewLongRows: rows a scrolling timeline draws once each (400
// bytes of styled text) are bounded by their bytes, not only by their
// count, and the newest are still remembered.
func TestMemoHoldsFewLongRows(t *testing.T) {
	var rows Memo[string, struct{}]
	pad := strings.Repeat("\x1b[38;5;245m│ step \x1b[m", 20)
	for i := 0; i < memoCap; i++ {
		rows.Put(fmt.Sprintf("%s %d", pad, i), struct{}{})
	}
	held := 0
	for k := range rows.cur {
		held += len(k)
	}
	for k := range rows.old {
		held += len(k)
	}
	if held > 2*memoBytes+len(pad)+16 {
		t.Errorf("the memo holds %d bytes of rows, more than two generations of %d", held, memoBytes)
	}
	if _, ok := rows.Get(fmt.Sprintf("%s %d", pad, memoCap-1)); !ok {
		t.Error("the newest row is not remembered")
	}
}

// TestMemoKeepsNoBiggerStringAlive: a remembered piece of a frame (a row
// cut from it, as the frame filter remembers rows) does not keep the frame
// in memory once nothing else holds it.
func TestMemoKeepsNoBiggerStringAlive(t *testing.T) {
	var rows Memo[string, struct{}]
	freed := make(chan string, 4)
	for _, name := range []string{"row key", "Width", "Fit", "Cut"} {
		frame := strings.Repeat("● a row of a frame ✓ drawn\n", 1000)
		row, _, _ := strings.Cut(frame, "\n")
		switch name {
		case "row key":
			rows.Put(row, struct{}{})
		case "Width":
			Width(row)
		case "Fit":
			Fit(row, 40)
		case "Cut":
			Cut(row, 200)
		}
		runtime.AddCleanup(unsafe.StringData(frame), func(n string) { freed <- n }, name)
	}
	left := map[string]bool{"row key": true, "Width": true, "Fit": true, "Cut": true}
	deadline := time.After(5 * time.Second)
	for len(left) > 0 {
		runtime.GC()
		select {
		case n := <-freed:
			delete(left, n)
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("frames still held by what was remembered of them: %v", left)
		}
	}
	if _, ok := rows.Get("● a row of a frame ✓ drawn"); !ok {
		t.Fatal("the row is no longer remembered")
	}
}
