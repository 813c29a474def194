package schema

import (
	"testing"
	"time"
)

// The hand parser agrees with time.Parse on every shape a store holds and
// on the ones it must refuse.
func TestParseTimeAgreesWithTimeParse(t *testing.T) {
	for _, s := range []string{
		"2026-11-29T12:00:00.000Z", "1999-12-31T23:59:59.999Z", "2024-02-29T00:00:00.001Z",
		"2023-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
		"2026-11-31T00:00:00.000Z", "2026-11-29T24:00:00.000Z", "2026-11-29T12:60:00.000Z",
		"2026-11-29T12:00:60.000Z", "2026-11-29T12:00:00.00xZ", "2026-11-29 12:00:00",
		"2026-11-29T12:00:00.5Z", "2026-11-29T12:00:00Z", "+026-11-29T12:00:00.000Z", "", "garbage",
	} {
		want := time.Time{}
		for _, layout := range []string{isoMillis, time.RFC3339Nano, sqlDateTime} {
			if v, err := time.Parse(layout, s); err == nil {
				want = v.UTC()
				break
			}
		}
		if got := ParseTime(s); !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("ParseTime(%q) = %v, time.Parse gives %v", s, got, want)
		}
	}
}
