package httpcache

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestWindowsOnFakeClock walks one entry through its freshness,
// stale-while-revalidate and stale-if-unreachable windows with the clock of
// a synctest bubble (docs/edge.md §14: freshness, Age and stale-* windows
// under testing/synctest).
func TestWindowsOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		sent := time.Now()
		time.Sleep(200 * time.Millisecond)
		got := time.Now()
		r := Response{Status: 200, ContentLength: 3, RequestTime: sent, ResponseTime: got,
			Header: hdr("Cache-Control", "max-age=2, stale-while-revalidate=5", "Date", FormatHTTPDate(got.Truncate(time.Second)))}
		req := Request{Method: http.MethodGet, Header: http.Header{}, Time: sent}
		if ok, why := Storable(req, r, p); !ok {
			t.Fatal(why)
		}
		st := NewStored(req, r)
		steps := []struct {
			sleep  time.Duration
			action Action
			age    string
			sie    bool // ServeStaleOnFailure(unreachable)
		}{
			{time.Second, ServeFresh, "1", true},
			{1500 * time.Millisecond, ServeStale, "2", true}, // RFC 5861 §3
			{5 * time.Second, Validate, "7", true},           // past stale-while-revalidate
			{54 * time.Second, Validate, "61", true},         // staleness 59.7 s < stale_if_unreachable
			{2 * time.Second, Validate, "63", false},         // staleness 61.7 s: past it
		}
		for i, s := range steps {
			time.Sleep(s.sleep)
			now := time.Now()
			d := Decide(req, st, now, p)
			if d.Action != s.action || AgeValue(d.Age) != s.age {
				t.Fatalf("step %d: %v age %s (%v); want %v age %s", i, d.Action, AgeValue(d.Age), d.Age, s.action, s.age)
			}
			if got := ServeStaleOnFailure(req, st, now, FailureUnreachable, p); got != s.sie {
				t.Fatalf("step %d: stale on unreachable %v (age %v)", i, got, d.Age)
			}
		}
	})
}
