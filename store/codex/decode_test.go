package codex

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// decodeLine routes a line by the keys serde writes before its payload and
// decodes a record vigil reads once; it must say of every line what the
// plain two-step decode says: every line of the real CLI's rollouts, and
// lines laid out otherwise, damaged, or odd in the ways a newer Codex
// might write them.
func TestDecodeLineAgreesWithTheTwoStepDecode(t *testing.T) {
	var lines [][]byte
	files, _ := filepath.Glob(filepath.Join(testkit.Fixtures(t, "agents/codex/rollout"), "*rollout-*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixture rollouts")
	}
	for _, f := range files {
		h, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(h)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		h.Close()
	}
	lines = append(lines,
		[]byte(`{"type":"response_item","timestamp":"2026-12-04T18:35:49.000Z","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"keys in another order"}]}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","type":"response_item","payload":{"role":"assistant","type":"message","content":[{"type":"output_text","text":"type not first"}]}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","type":"world_state","payload":{"full":tru}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","ordinal":3,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":"not an object"}}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","ordinal":3,"type":"event_msg","payload":{"type":"item_completed","item":{"name":{"an":"object"}}}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","ordinal":3,"type":"session_meta","payload":{"id":7}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:\"49","type":"turn_context","payload":{"model":"m"}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","ordinal":,"type":"turn_context","payload":{"model":"m"}}`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","type":"response_item","payload":{"type":"func`),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.000Z","type":"turn_context","payload":{"model":"m"}} trailing`),
	)
	for i, raw := range lines {
		l1, p1, err1 := decodeLine(raw)
		l2, p2, err2 := decodeTwice(raw)
		if (err1 == nil) != (err2 == nil) {
			t.Errorf("line %d: errors %v and %v\n%.300s", i, err1, err2, raw)
			continue
		}
		if err1 != nil {
			continue
		}
		if l1.Timestamp != l2.Timestamp || l1.Type != l2.Type || !reflect.DeepEqual(p1, p2) {
			t.Errorf("line %d: %q %q %+v\nvs %q %q %+v\n%.300s", i, l1.Timestamp, l1.Type, p1, l2.Timestamp, l2.Type, p2, raw)
		}
	}
}
