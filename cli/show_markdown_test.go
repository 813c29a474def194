package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// A store's text in `show --markdown` is text, not markup: a goal, an
// outcome, a question, its choices and a plan's steps holding raw HTML, a
// link, an image, emphasis, code or a heading come out escaped, so no
// renderer of the export runs <img onerror=…> or offers a javascript:
// link. The old code wrote them as they were.
func TestShowMarkdownEscapesStoreText(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := twin.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const html, link = `<img src=x onerror=alert(1)>`, `[click](javascript:alert(1))`
	hostile := "ship *it* " + html + " " + link + " ![i](http://evil/x.png) `code` ~~gone~~ &lt;b&gt;"
	root, err := w.StartRun(ctx, hostile, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, root, time.Hour); err != nil {
		t.Fatal(err)
	}
	child, err := w.StartChildRun(ctx, "# heading "+html, "/w", root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, child, store.Outcome(link)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutQuestion(ctx, root, 1, "which "+html+"?", "", []string{"1. " + link, "- " + html}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutPlan(ctx, root, 1, []store.PlanStep{{Intent: "> quoted " + link, Agent: html}}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	r := newHarness(t).run("show", root, "--markdown", "--store", p)
	r.wantCode(t, 0)
	for _, raw := range []string{"<img", "](javascript:", "![i](", "*it*", "`code`", "~~gone~~", "&lt;", "\n# heading", "\n- 1. ", "\n- - ", "\n1. > "} {
		if unescaped(r.stdout, raw) {
			t.Errorf("the export holds %q as markup:\n%s", raw, r.stdout)
		}
	}
	contains(t, r.stdout,
		`# Run 1: ship \*it\* \<img src=x onerror=alert(1)\> \[click\](javascript:alert(1)) !\[i\](http://evil/x.png) \`+"`code\\`"+` \~\~gone\~\~ \&lt;b\&gt;`,
		`\# heading \<img src=x onerror=alert(1)\>`,
		`> which \<img src=x onerror=alert(1)\>?`,
		"- 1\\. \\[click\\](javascript:alert(1))\n",
		"- \\- \\<img src=x onerror=alert(1)\\>\n",
		"1. \\> quoted \\[click\\](javascript:alert(1)) (\\<img src=x onerror=alert(1)\\>)\n")
}

// unescaped says whether s holds raw with its first character not escaped
// by a backslash.
func unescaped(s, raw string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], raw)
		if j < 0 {
			return false
		}
		at := i + j
		if k := at + strings.IndexFunc(raw, func(r rune) bool { return r != '\n' }); k == 0 || s[k-1] != '\\' {
			return true
		}
		i = at + 1
	}
}
