package schema

import (
	"strconv"
	"time"
)

// io-harness stamps times with SQLite's clock in two shapes: ISO-8601 with
// milliseconds (strftime('%Y-%m-%dT%H:%M:%fZ','now')) for most columns and
// datetime('now') (no T, Z or milliseconds) for a few. Both are UTC.
const (
	isoMillis   = "2006-01-02T15:04:05.000Z"
	sqlDateTime = "2006-01-02 15:04:05"
)

// ParseTime reads either shape; anything else (or NULL) is the zero time.
func ParseTime(s string) time.Time {
	if t, ok := parseISOMillis(s); ok {
		return t
	}
	for _, layout := range []string{isoMillis, time.RFC3339Nano, sqlDateTime} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// ID is a row id as the text vigil's API carries.
func ID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseID turns a run or request id given as text into the integer the
// store keys on.
func ParseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// parseISOMillis reads isoMillis by hand: time.Parse per row was a tenth
// of listing 100 k runs. Anything it does not fully recognise (a leap
// second, a field out of range) is left to time.Parse.
func parseISOMillis(s string) (time.Time, bool) {
	if len(s) != len(isoMillis) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
		s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, j int) int {
		n := 0
		for k := i; k < j; k++ {
			c := s[k]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != d { // 31 February: time.Parse refuses it, so do we
		return time.Time{}, false
	}
	return t, true
}
