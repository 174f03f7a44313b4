package httpcache

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestConditionalHeaders(t *testing.T) {
	lm := httpDate(-3000)
	tests := []struct {
		name        string
		respH       []string
		reqH        []string
		set         map[string]string
		remove      []string
		conditional bool
	}{
		{name: "RFC9111 4.3.1 If-None-Match from strong ETag", respH: []string{"ETag", `"abcdef"`}, set: map[string]string{"If-None-Match": `"abcdef"`}, conditional: true},
		{name: "RFC9111 4.3.1 If-None-Match from weak ETag", respH: []string{"ETag", `W/"abcdef"`}, set: map[string]string{"If-None-Match": `W/"abcdef"`}, conditional: true},
		{name: "RFC9111 4.3.1 If-Modified-Since from Last-Modified", respH: []string{"Last-Modified", lm}, set: map[string]string{"If-Modified-Since": lm}, conditional: true},
		{name: "RFC9111 4.3.1 both validators", respH: []string{"ETag", `"a"`, "Last-Modified", lm}, set: map[string]string{"If-None-Match": `"a"`, "If-Modified-Since": lm}, conditional: true},
		{name: "spec 7.2 unquoted ETag is no validator", respH: []string{"ETag", `abcdef`}, set: map[string]string{}, conditional: false},
		{name: "RFC9111 4.3.1 no validator refetches", set: map[string]string{}, conditional: false},
		{name: "RFC9111 4.3.1 Vary-selected fields sent", respH: []string{"ETag", `"a"`, "Vary", "Abc, Def"}, reqH: []string{"Abc", "123"}, set: map[string]string{"If-None-Match": `"a"`, "Abc": "123"}, remove: []string{"Def"}, conditional: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := resp(200, hdr(append([]string{"Cache-Control", "max-age=1"}, tc.respH...)...))
			st := NewStored(getReq(hdr(tc.reqH...)), r)
			c := ConditionalHeaders(st)
			if c.Conditional != tc.conditional || len(c.Set) != len(tc.set) {
				t.Fatalf("got %+v", c)
			}
			for k, v := range tc.set {
				if c.Set.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, c.Set.Get(k), v)
				}
			}
			for _, f := range append([]string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"}, tc.remove...) {
				if !slices.Contains(c.Remove, f) {
					t.Errorf("%s not removed: %v", f, c.Remove)
				}
			}
		})
	}
}

func TestSelects304(t *testing.T) {
	lm, lm2 := httpDate(-100), httpDate(-50)
	tests := []struct {
		name           string
		stored, result []string
		want           bool
	}{
		{"RFC9111 4.3.4 same strong ETag", []string{"ETag", `"a"`}, []string{"ETag", `"a"`}, true},
		{"RFC9111 4.3.4 different strong ETag", []string{"ETag", `"a"`}, []string{"ETag", `"b"`}, false},
		{"RFC9111 4.3.4 strong 304 vs weak stored", []string{"ETag", `W/"a"`}, []string{"ETag", `"a"`}, false},
		{"RFC9111 4.3.4 weak 304 matches weakly", []string{"ETag", `"a"`}, []string{"ETag", `W/"a"`}, true},
		{"RFC9111 4.3.4 weak 304 other tag", []string{"ETag", `W/"a"`}, []string{"ETag", `W/"b"`}, false},
		{"RFC9111 4.3.4 ETag 304 vs stored without ETag", []string{"Last-Modified", lm}, []string{"ETag", `"a"`}, false},
		{"RFC9111 4.3.4 same Last-Modified", []string{"Last-Modified", lm}, []string{"Last-Modified", lm}, true},
		{"RFC9111 4.3.4 Last-Modified only, stored also has ETag", []string{"ETag", `"a"`, "Last-Modified", lm}, []string{"Last-Modified", lm}, true},
		{"RFC9111 4.3.4 different Last-Modified", []string{"Last-Modified", lm}, []string{"Last-Modified", lm2}, false},
		{"RFC9111 4.3.4 no validator in 304, stored has one", []string{"ETag", `"a"`}, nil, false},
		{"RFC9111 4.3.4 no validator on either side", nil, nil, true},
		{"RFC9111 4.3.4 invalid 304 ETag ignored", []string{"Last-Modified", lm}, []string{"ETag", "abc", "Last-Modified", lm}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Selects304(hdr(tc.stored...), hdr(tc.result...)); got != tc.want {
				t.Errorf("Selects304 = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUpdate304(t *testing.T) {
	orig := resp(200, hdr("Cache-Control", "max-age=1", "ETag", `"e1"`, "Date", httpDate(0), "Age", "30",
		"Test-Header", "A", "Content-Type", "text/plain", "Content-Length", "5", "Set-Cookie", "a=b", "Set-Cookie", "c=d", "Keep", "me"))
	orig.ContentLength = 5
	st := NewStored(getReq(nil), orig)
	st.Invalidated = true
	r304 := Response{Status: 304, ContentLength: -1, RequestTime: at(99), ResponseTime: at(100), Header: hdr(
		"Cache-Control", "max-age=3600", "ETag", `"e1"`, "Test-Header", "B", "Content-Type", "text/plain;charset=utf-8",
		"Content-Length", "0", "Set-Cookie", "a=c", "Connection", "X-Hop", "X-Hop", "1", "Transfer-Encoding", "chunked")}
	got, ok := Update304(st, r304)
	if !ok {
		t.Fatal("RFC9111 4.3.4: 304 with the same ETag did not select the entry")
	}
	checks := map[string][]string{
		"Cache-Control": {"max-age=3600"}, "Test-Header": {"B"}, "Content-Type": {"text/plain;charset=utf-8"},
		"Content-Length": {"5"}, "Set-Cookie": {"a=c"}, "Keep": {"me"}, "Date": {httpDate(100)},
	}
	for k, want := range checks {
		if v := got.Header.Values(k); !slices.Equal(v, want) {
			t.Errorf("RFC9111 3.2 %s = %v, want %v", k, v, want)
		}
	}
	for _, gone := range []string{"Age", "X-Hop", "Connection", "Transfer-Encoding"} {
		if got.Header.Get(gone) != "" {
			t.Errorf("RFC9111 3.2 %s present after update", gone)
		}
	}
	if !got.ResponseTime.Equal(at(100)) || !got.RequestTime.Equal(at(99)) || got.Invalidated {
		t.Errorf("times/invalidated not reset: %+v", got)
	}
	if st.Header.Get("Test-Header") != "A" || !st.Invalidated {
		t.Error("Update304 modified its input")
	}
	if lt, age := Freshness(got, at(110), DefaultPolicy()); lt != time.Hour || age != 11*time.Second {
		t.Errorf("after update lifetime %v age %v", lt, age)
	}

	r304.Header.Set("ETag", `"e2"`)
	if _, ok := Update304(st, r304); ok {
		t.Error("RFC9111 4.3.4: a 304 with another strong ETag selected the entry")
	}
	r304.Header.Set("ETag", `"e1"`)
	r304.Header.Set("Age", "7")
	r304.Header.Set("Date", httpDate(90))
	got, _ = Update304(st, r304)
	if got.Header.Get("Age") != "7" || got.Header.Get("Date") != httpDate(90) {
		t.Errorf("RFC9111 3.2 Age/Date from the 304 not kept: %v", got.Header)
	}
}

func TestFreshenFromHead(t *testing.T) {
	lm := httpDate(-100)
	base := hdr("Cache-Control", "max-age=2", "ETag", `"a"`, "Last-Modified", lm, "Template-A", "1", "Vary", "Foo")
	mk := func() *Stored {
		r := resp(200, base.Clone())
		r.ContentLength = 10
		return NewStored(getReq(hdr("Foo", "1")), r)
	}
	tests := []struct {
		name    string
		status  int
		reqH    []string
		headH   []string
		outcome HeadOutcome
	}{
		{"RFC9111 4.3.5 matching HEAD freshens", 200, []string{"Foo", "1"}, []string{"Cache-Control", "max-age=1000", "ETag", `"a"`, "Last-Modified", lm, "Content-Length", "10", "Template-A", "2"}, HeadFreshened},
		{"RFC9111 4.3.5 HEAD without Content-Length freshens", 200, []string{"Foo", "1"}, []string{"ETag", `"a"`, "Last-Modified", lm}, HeadFreshened},
		{"RFC9111 4.3.5 other ETag makes stale", 200, []string{"Foo", "1"}, []string{"ETag", `"b"`, "Last-Modified", lm}, HeadStaled},
		{"RFC9111 4.3.5 missing ETag makes stale", 200, []string{"Foo", "1"}, []string{"Last-Modified", lm}, HeadStaled},
		{"RFC9111 4.3.5 other Last-Modified makes stale", 200, []string{"Foo", "1"}, []string{"ETag", `"a"`, "Last-Modified", httpDate(-5)}, HeadStaled},
		{"RFC9111 4.3.5 other length makes stale", 200, []string{"Foo", "1"}, []string{"ETag", `"a"`, "Last-Modified", lm, "Content-Length", "11"}, HeadStaled},
		{"RFC9111 4.3.5 HEAD that cannot select ignored", 200, []string{"Foo", "2"}, []string{"ETag", `"b"`}, HeadIgnored},
		{"spec 7.4 non-200 HEAD ignored", 410, []string{"Foo", "1"}, []string{"ETag", `"b"`}, HeadIgnored},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := mk()
			r := resp(tc.status, hdr(tc.headH...))
			r.RequestTime, r.ResponseTime = at(5), at(5)
			got, outcome := FreshenFromHead(Request{Method: http.MethodHead, Header: hdr(tc.reqH...)}, st, r)
			if outcome != tc.outcome {
				t.Fatalf("outcome %v, want %v", outcome, tc.outcome)
			}
			switch outcome {
			case HeadFreshened:
				if !got.ResponseTime.Equal(at(5)) || got.Header.Get("Template-A") == "" || got == st {
					t.Errorf("not freshened: %+v", got)
				}
			case HeadStaled:
				if !got.Invalidated || st.Invalidated {
					t.Error("not marked invalidated on a copy")
				}
			case HeadIgnored:
				if got != st {
					t.Error("ignored HEAD changed the entry")
				}
			}
		})
	}
	st := mk()
	r := resp(200, hdr("Cache-Control", "max-age=1000", "ETag", `"a"`, "Last-Modified", lm, "Template-A", "2"))
	r.RequestTime, r.ResponseTime = at(5), at(5)
	got, _ := FreshenFromHead(Request{Method: http.MethodHead, Header: hdr("Foo", "1")}, st, r)
	if got.Header.Get("Template-A") != "2" || Decide(getReq(hdr("Foo", "1")), got, at(10), DefaultPolicy()).Action != ServeFresh {
		t.Error("RFC9111 4.3.5: HEAD did not update fields and freshness")
	}
}
