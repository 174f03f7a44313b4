package descriptor

import (
	"fmt"
	"time"
)

// committedLayout is the committed_at form: UTC, 3 fractional digits, Z.
const committedLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t as committed_at is written: UTC with exactly three
// fractional digits and "Z" (e.g. 2026-01-02T03:04:05.678Z). For years
// 0000–9999 the strings sort in time order.
func FormatTime(t time.Time) string {
	return t.UTC().Format(committedLayout)
}

// ParseTime parses an RFC 3339 time stamp of at most MaxTimeBytes bytes, as
// created_at and signed_at are; anything else is 400 bad_request
// (invalid_time). The string itself is what ron stores; the time is for
// comparisons.
func ParseTime(s string) (time.Time, error) {
	t, problem := parseRFC3339(s)
	if problem != "" {
		return time.Time{}, badRequest(top(""), ReasonInvalidTime, "%s", problem)
	}
	return t, nil
}

func parseRFC3339(s string) (time.Time, string) {
	if len(s) > MaxTimeBytes {
		return time.Time{}, fmt.Sprintf("time stamp of %d bytes exceeds %d", len(s), MaxTimeBytes)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Sprintf("%q is not an RFC 3339 time stamp", clip(s))
	}
	return t, ""
}

// checkTime parses s at l and, unless now is zero, requires it to be no
// later than now + skew.
func checkTime(l loc, s string, now time.Time, skew time.Duration) error {
	t, problem := parseRFC3339(s)
	if problem != "" {
		return badRequest(l, ReasonInvalidTime, "%s", problem)
	}
	if !now.IsZero() && t.After(now.Add(skew)) {
		return badRequest(l, ReasonFutureTime, "%s lies more than %s in the future", s, skew)
	}
	return nil
}

// isCommittedAt reports whether s is exactly in FormatTime's form.
func isCommittedAt(s string) bool {
	t, err := time.Parse(committedLayout, s)
	return err == nil && t.Format(committedLayout) == s
}
