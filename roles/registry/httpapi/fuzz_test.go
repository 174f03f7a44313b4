package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzLastEventID drives the stream's resume point from arbitrary
// Last-Event-ID and ?since= values: never a panic, only canonical-ish
// decimals accepted, the header winning when valid, and the first version
// sent always last+1 for a valid last ≤ HEAD and HEAD otherwise.
func FuzzLastEventID(f *testing.F) {
	for _, s := range [][2]string{{"", ""}, {"5", ""}, {"", "3"}, {"x", "2"}, {"007", "1"}, {"18446744073709551615", ""},
		{"18446744073709551616", "9"}, {"-1", "+1"}, {" 1", "1 "}, {"1e3", "0x10"}, {"٣", "１"}} {
		f.Add(s[0], s[1], uint64(10))
	}
	f.Fuzz(func(t *testing.T, header, since string, head uint64) {
		r := &http.Request{Header: http.Header{}, URL: &url.URL{RawQuery: url.Values{"since": {since}}.Encode()}}
		if header != "" {
			r.Header.Set("Last-Event-ID", header)
		}
		hv, hok := checkParse(t, header)
		sv, sok := checkParse(t, since)
		last := streamStart(r)
		switch {
		case hok:
			if last == nil || *last != hv {
				t.Fatalf("header %q valid: last %v", header, last)
			}
		case sok:
			if last == nil || *last != sv {
				t.Fatalf("since %q valid: last %v", since, last)
			}
		case last != nil:
			t.Fatalf("neither %q nor %q valid, last %d", header, since, *last)
		}
		next := startAt(last, head)
		if last != nil && *last <= head {
			if next != *last+1 {
				t.Fatalf("resume after %d (head %d) starts at %d", *last, head, next)
			}
		} else if next != head {
			t.Fatalf("fresh start at %d, head %d", next, head)
		}
	})
}

// checkParse runs parseEventID and checks its contract against s.
func checkParse(t *testing.T, s string) (uint64, bool) {
	v, ok := parseEventID(s)
	digits := s != "" && len(s) <= 20 && strings.Trim(s, "0123456789") == ""
	if !digits && ok {
		t.Fatalf("parseEventID(%q) accepted a non-decimal", s)
	}
	if !ok {
		if _, err := strconv.ParseUint(s, 10, 64); digits && err == nil {
			t.Fatalf("parseEventID(%q) refused a decimal", s)
		}
		return 0, false
	}
	if trimmed := strings.TrimLeft(s, "0"); strconv.FormatUint(v, 10) != trimmed && !(trimmed == "" && v == 0) {
		t.Fatalf("parseEventID(%q) = %d", s, v)
	}
	return v, true
}
