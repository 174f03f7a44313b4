package httpcache

import (
	"math"
	"testing"
	"time"
)

func TestLifetime(t *testing.T) {
	s := time.Second
	tests := []struct {
		name       string
		status     int
		h          []string
		defaultTTL time.Duration
		want       time.Duration
	}{
		{name: "RFC9111 4.2.1 max-age", status: 200, h: []string{"Cache-Control", "max-age=3600"}, want: 3600 * s},
		{name: "RFC9111 4.2.1 s-maxage beats longer max-age", status: 200, h: []string{"Cache-Control", "max-age=3600, s-maxage=1"}, want: s},
		{name: "RFC9111 4.2.1 s-maxage beats shorter max-age", status: 200, h: []string{"Cache-Control", "max-age=1, s-maxage=3600"}, want: 3600 * s},
		{name: "RFC9111 4.2.1 s-maxage on another line", status: 200, h: []string{"Cache-Control", "max-age=3600", "Cache-Control", "s-maxage=1"}, want: s},
		{name: "RFC9111 4.2.1 bad s-maxage counts as 0", status: 200, h: []string{"Cache-Control", "s-maxage=abc, max-age=3600"}, want: 0},
		{name: "RFC9111 4.2.1 bad max-age counts as 0", status: 200, h: []string{"Cache-Control", "max-age=100a", "Expires", httpDate(100), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 4.2.1 max-age beats past Expires", status: 200, h: []string{"Cache-Control", "max-age=3600", "Expires", httpDate(-10000), "Date", httpDate(0)}, want: 3600 * s},
		{name: "RFC9111 4.2.1 max-age beats invalid Expires", status: 200, h: []string{"Cache-Control", "max-age=3600", "Expires", "0"}, want: 3600 * s},
		{name: "RFC9111 4.2.1 max-age=0 beats future Expires", status: 200, h: []string{"Cache-Control", "max-age=0", "Expires", httpDate(10000), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 4.2.1 max-age saturates", status: 200, h: []string{"Cache-Control", "max-age=99999999999"}, want: MaxDeltaSeconds * s},
		{name: "RFC9111 4.2.1 Expires minus Date", status: 200, h: []string{"Expires", httpDate(30), "Date", httpDate(10)}, want: 20 * s},
		{name: "RFC9111 4.2.1 Expires before Date is 0", status: 200, h: []string{"Expires", httpDate(300), "Date", httpDate(400)}, want: 0},
		{name: "RFC9111 4.2.1 Expires equal Date is 0", status: 200, h: []string{"Expires", httpDate(0), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 5.3 invalid Expires is 0", status: 200, h: []string{"Expires", "0", "Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 5.3 two Expires lines are 0", status: 200, h: []string{"Expires", httpDate(100), "Expires", httpDate(100), "Date", httpDate(0)}, want: 0},
		{name: "RFC9110 6.6.1 invalid Date uses response time", status: 200, h: []string{"Expires", httpDate(10), "Date", "foo"}, want: 10 * s},
		{name: "RFC9110 6.6.1 missing Date uses response time", status: 200, h: []string{"Expires", httpDate(10)}, want: 10 * s},
		{name: "RFC9111 4.2.2 heuristic 10 percent", status: 200, h: []string{"Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 100 * s},
		{name: "RFC9111 4.2.2 heuristic capped at 24h", status: 200, h: []string{"Last-Modified", httpDate(-86400 * 30), "Date", httpDate(0)}, want: 24 * time.Hour},
		{name: "RFC9111 4.2.2 heuristic needs Last-Modified before Date", status: 200, h: []string{"Last-Modified", httpDate(10), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 4.2.2 heuristic not for 201", status: 201, h: []string{"Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 0},
		{name: "RFC9111 4.2.2 heuristic with public for 599", status: 599, h: []string{"Cache-Control", "public", "Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 100 * s},
		{name: "RFC9111 4.2.2 no heuristic with explicit Expires", status: 200, h: []string{"Expires", httpDate(-1), "Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 0},
		{name: "spec 7.3 default_ttl replaces the heuristic", status: 200, h: []string{"Last-Modified", httpDate(-1000), "Date", httpDate(0)}, defaultTTL: 5 * time.Minute, want: 5 * time.Minute},
		{name: "spec 7.3 default_ttl without Last-Modified", status: 404, defaultTTL: time.Minute, want: time.Minute},
		{name: "spec 7.3 default_ttl not for 503", status: 503, defaultTTL: time.Minute, want: 0},
		{name: "RFC9213 2.1 CDN max-age beats CC max-age", status: 200, h: []string{"Cache-Control", "max-age=3600", "CDN-Cache-Control", "max-age=1"}, want: s},
		{name: "RFC9213 2.1 CDN ignores Expires", status: 200, h: []string{"CDN-Cache-Control", "public", "Expires", httpDate(100), "Last-Modified", httpDate(-1000), "Date", httpDate(0)}, want: 100 * s},
		{name: "RFC9111 4.2 nothing", status: 200, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPolicy()
			p.DefaultTTL = tc.defaultTTL
			if got := Lifetime(tc.status, hdr(tc.h...), t0, p); got != tc.want {
				t.Errorf("Lifetime = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCurrentAge(t *testing.T) {
	s := time.Second
	tests := []struct {
		name          string
		h             []string
		req, rsp, now float64
		want          time.Duration
	}{
		{name: "RFC9111 4.2.3 resident time", h: []string{"Date", httpDate(0)}, now: 30, want: 30 * s},
		{name: "RFC9111 4.2.3 Age header", h: []string{"Date", httpDate(0), "Age", "15"}, now: 0, want: 15 * s},
		{name: "RFC9111 4.2.3 apparent age from Date", h: []string{"Date", httpDate(-20)}, now: 5, want: 25 * s},
		{name: "RFC9111 4.2.3 slow Date", h: []string{"Date", httpDate(-10), "Age", "25"}, now: 0, want: 25 * s},
		{name: "RFC9111 4.2.3 fast Date gives no negative apparent age", h: []string{"Date", httpDate(10), "Age", "15"}, now: 0, want: 15 * s},
		{name: "RFC9111 4.2.3 response delay added to Age", h: []string{"Date", httpDate(0), "Age", "10"}, req: -3, rsp: 0, now: 0, want: 13 * s},
		{name: "RFC9111 4.2.3 max of apparent and corrected", h: []string{"Date", httpDate(-100), "Age", "10"}, req: -3, now: 0, want: 100 * s},
		{name: "RFC9111 4.2.3 invalid Age ignored", h: []string{"Date", httpDate(0), "Age", "abc"}, now: 7, want: 7 * s},
		{name: "RFC9111 4.2.3 invalid Date means no apparent age", h: []string{"Date", "foo"}, now: 7, want: 7 * s},
		{name: "RFC9111 4.2.3 clock step back never negative", h: []string{"Date", httpDate(0)}, now: -50, want: 0},
		{name: "RFC9111 4.2.3 request after response never negative", h: []string{"Date", httpDate(0)}, req: 5, now: 0, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CurrentAge(hdr(tc.h...), at(tc.req), at(tc.rsp), at(tc.now)); got != tc.want {
				t.Errorf("CurrentAge = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCurrentAgeSaturates(t *testing.T) {
	h := hdr("Date", "Mon, 01 Jan 0001 00:00:00 GMT", "Age", "2147483648")
	far := time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := CurrentAge(h, far, far, far.Add(time.Hour)); got != math.MaxInt64 {
		t.Fatalf("CurrentAge = %v, want saturation", got)
	}
}

func TestFreshness(t *testing.T) {
	r := resp(200, hdr("Cache-Control", "max-age=60", "Date", httpDate(-5)))
	r.RequestTime, r.ResponseTime = at(-1), at(0)
	st := NewStored(getReq(nil), r)
	lifetime, age := Freshness(st, at(10), DefaultPolicy())
	if lifetime != time.Minute || age != 15*time.Second {
		t.Fatalf("Freshness = %v, %v", lifetime, age)
	}
}

func TestEntryValidators(t *testing.T) {
	tests := []struct {
		name    string
		h       []string
		modTime time.Time
		strong  bool
	}{
		{"RFC9110 8.8.2.2 Date 1s after Last-Modified is strong", []string{"Last-Modified", httpDate(-1), "Date", httpDate(0)}, at(-1), true},
		{"RFC9110 8.8.2.2 same second is weak", []string{"Last-Modified", httpDate(0), "Date", httpDate(0)}, at(0), false},
		{"spec 7.4 If-Modified-Since falls back to Date", []string{"Date", httpDate(-3)}, at(-3), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := stored(hdr(tc.h...))
			if got := ModificationTime(st); !got.Equal(tc.modTime) {
				t.Errorf("ModificationTime = %v, want %v", got, tc.modTime)
			}
			if got := StrongLastModified(st); got != tc.strong {
				t.Errorf("StrongLastModified = %v", got)
			}
		})
	}
}
