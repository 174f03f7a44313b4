package httpcache

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func FuzzParseCacheControl(f *testing.F) {
	for _, s := range []string{"max-age=60", `no-cache="a, b", max-age="3"`, "max-age =1", `x="\`, "a=b=c,,,", `"`, "MAX-AGE=99999999999999999999"} {
		f.Add(s, "s-maxage=1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		d := ParseCacheControl([]string{a, b})
		for name := range d {
			if name != strings.ToLower(name) || !isToken(name) {
				t.Fatalf("bad name %q", name)
			}
			if s, ok := d.Seconds(name); ok && (s < 0 || s > MaxDeltaSeconds*time.Second) {
				t.Fatalf("%s = %v", name, s)
			}
		}
		first := ParseCacheControl([]string{a})
		for name, v := range first {
			if d[name] != v {
				t.Fatalf("first occurrence of %s not kept", name)
			}
		}
		RequestDirectives(http.Header{"Cache-Control": {a}, "Pragma": {b}})
	})
}

func FuzzParseCDNCacheControl(f *testing.F) {
	for _, s := range []string{"max-age=60", "private, max-age=5;a=1", `no-cache=("a" "b")`, "max-age=1.5", "x=:YQ==:", "x=?1", "max-age=-0", "(", "a=(a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseCDNCacheControl([]string{s})
		if !ok {
			return
		}
		if len(d) == 0 && !strings.Contains(s, "?0") {
			t.Fatalf("valid but empty: %q", s)
		}
		for _, name := range cdnIntegerDirectives {
			if _, present := d[name]; present {
				if _, valid := d.Seconds(name); !valid {
					t.Fatalf("%s accepted with a non-integer value in %q", name, s)
				}
			}
		}
	})
}

func FuzzParseHTTPDate(f *testing.F) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "0", "Thu, 31 Feb 2024 00:00:00 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, ok := ParseHTTPDate(s)
		if !ok {
			return
		}
		if tm.Location() != time.UTC || tm.Nanosecond() != 0 {
			t.Fatalf("%q → %v", s, tm)
		}
		if back, ok := ParseHTTPDate(FormatHTTPDate(tm)); !ok || !back.Equal(tm) {
			t.Fatalf("round trip of %q: %v %v", s, back, ok)
		}
		_, present, valid := ParseExpires(http.Header{"Expires": {s}})
		if !present || !valid {
			t.Fatal("Expires disagrees with ParseHTTPDate")
		}
	})
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"15", "0, 7200", "-1", "7200.0", "99999999999999999999", " 3 "} {
		f.Add(s, "0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{"Age": {a, b}}
		age, ok := ParseAge(h)
		if age < 0 || age > MaxDeltaSeconds*time.Second || (!ok && age != 0) {
			t.Fatalf("ParseAge(%q, %q) = %v, %v", a, b, age, ok)
		}
		h.Set("Date", a)
		if CurrentAge(h, t0, t0, t0) < 0 {
			t.Fatal("negative age")
		}
	})
}

func FuzzVary(f *testing.F) {
	for _, s := range []string{"Foo", "foo, BAR", "*", ", *", "Accept-Encoding,,", " a , b "} {
		f.Add(s, " 1, 2 ")
	}
	f.Fuzz(func(t *testing.T, vary, value string) {
		h := http.Header{"Vary": {vary}}
		names, star := ParseVary(h)
		for _, n := range names {
			if n == "" || n == "*" || n != http.CanonicalHeaderKey(n) {
				t.Fatalf("bad name %q", n)
			}
		}
		if star != strings.Contains(","+strings.ReplaceAll(strings.ReplaceAll(vary, " ", ""), "\t", "")+",", ",*,") {
			t.Fatalf("star = %v for %q", star, vary)
		}
		req := http.Header{}
		for _, n := range names {
			req.Add(n, value)
		}
		st := NewStored(Request{Method: http.MethodGet, Header: req}, Response{Status: 200, Header: h.Clone(), ContentLength: -1})
		if !star && !VaryMatches(st, req) {
			t.Fatal("a request does not match the variant stored for it")
		}
		v, _ := NormalizedValue(http.Header{"X": {value}}, "X")
		if v2, _ := NormalizedValue(http.Header{"X": {v}}, "X"); v2 != v {
			t.Fatalf("normalisation not idempotent: %q → %q → %q", value, v, v2)
		}
	})
}

func FuzzParseETag(f *testing.F) {
	for _, s := range []string{`"a"`, `W/"a"`, `w/"a"`, `abc`, `""`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := ParseETag(s)
		if !ok {
			return
		}
		if back, ok := ParseETag(e.String()); !ok || back != e {
			t.Fatalf("round trip %q", s)
		}
	})
}
