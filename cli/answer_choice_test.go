package cli

import (
	"context"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// `vigil answer question:1 2` sends the text of choice 2, as the explorer
// does (store.ChoiceAnswer); --raw sends the bare number.
func TestAnswerChoiceNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		out  string
		want string
	}{
		{[]string{"answer", "question:1", "2"}, "answered question:1 (run 7, step 2): drop it\n", "drop it"},
		{[]string{"answer", "question:1", "2", "--raw"}, "answered question:1 (run 7, step 2): 2\n", "2"},
		{[]string{"answer", "question:1", "3"}, "answered question:1 (run 7, step 2): 3\n", "3"}, // names no choice
	} {
		p := fixtureStore(t)
		r := newHarness(t).run(append(c.args, "--store", p)...)
		r.wantCode(t, 0)
		if r.stdout != c.out {
			t.Errorf("%v: stdout %q, want %q", c.args, r.stdout, c.out)
		}
		s, err := ioharness.OpenReadOnly(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.Request(context.Background(), store.RequestKey{Kind: store.Question, ID: "1"})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if q.Decision != c.want {
			t.Errorf("%v: the store holds the answer %q, want %q", c.args, q.Decision, c.want)
		}
	}
}
