package hostile

import "testing"

// The corpus has what the check needs: more than 30 strings.
func TestCorpus(t *testing.T) {
	if n := len(Corpus()); n < 30 {
		t.Fatalf("%d strings", n)
	}
}

// TestIOHarness: an io-harness store with a hostile string in every field
// reaches no terminal as anything but text.
func TestIOHarness(t *testing.T) {
	path, err := BuildIOHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	frames, outputs := Check(t, path, Options{Trace: true})
	t.Logf("%d frames, %d command outputs", frames, outputs)
}
