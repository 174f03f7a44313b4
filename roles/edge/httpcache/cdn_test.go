package httpcache

import (
	"testing"
	"time"
)

func TestParseCDNCacheControl(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		ok     bool
		maxAge time.Duration // when ok and > 0
		has    []string
	}{
		{name: "RFC9213 2.1 max-age", lines: []string{"max-age=3600"}, ok: true, maxAge: time.Hour, has: []string{"max-age"}},
		{name: "RFC9213 2.1 extension and max-age", lines: []string{"foobar, max-age=3600"}, ok: true, maxAge: time.Hour, has: []string{"foobar"}},
		{name: "RFC9213 2.1 saturates at 2^31", lines: []string{"max-age=99999999999"}, ok: true, maxAge: MaxDeltaSeconds * time.Second},
		{name: "RFC9213 2.1 boolean private", lines: []string{"private"}, ok: true, has: []string{"private"}},
		{name: "RFC9213 2.1 boolean false is absent", lines: []string{"no-store=?0, max-age=5"}, ok: true, maxAge: 5 * time.Second},
		{name: "RFC9213 2.1 lines combined", lines: []string{"no-store", "max-age=5"}, ok: true, maxAge: 5 * time.Second, has: []string{"no-store"}},
		{name: "RFC8941 4.2.2 parameters ignored", lines: []string{"max-age=5;foo=bar, public;x"}, ok: true, maxAge: 5 * time.Second, has: []string{"public"}},
		{name: "RFC8941 4.2.1 inner list", lines: []string{`no-cache=("a" "b")`}, ok: true, has: []string{"no-cache"}},
		{name: "RFC8941 4.2 OWS around commas", lines: []string{"max-age=5 ,\tpublic"}, ok: true, maxAge: 5 * time.Second, has: []string{"public"}},
		{name: "RFC8941 4.2 string value", lines: []string{`foo="bar"`}, ok: true, has: []string{"foo"}},
		{name: "RFC8941 4.2 decimal on other directive", lines: []string{"foo=1.5, max-age=5"}, ok: true, maxAge: 5 * time.Second},
		{name: "RFC8941 4.2 byte sequence", lines: []string{"foo=:aGVsbG8=:"}, ok: true, has: []string{"foo"}},
		{name: "RFC9213 2.1 absent", lines: nil},
		{name: "RFC9213 2.1 empty ignored", lines: []string{""}},
		{name: "RFC8941 4.2 unknown type invalid", lines: []string{"max-age=10000, &&&&&"}},
		{name: "spec 7.3 quoted max-age invalid", lines: []string{`max-age="10000"`}},
		{name: "spec 7.3 decimal max-age invalid", lines: []string{"max-age=60.0"}},
		{name: "spec 7.3 negative max-age invalid", lines: []string{"max-age=-1"}},
		{name: "spec 7.3 boolean max-age invalid", lines: []string{"max-age"}},
		{name: "spec 7.3 token s-maxage invalid", lines: []string{"s-maxage=abc"}},
		{name: "spec 7.3 string stale-if-error invalid", lines: []string{`stale-if-error="5"`}},
		{name: "RFC8941 4.2 space before equals invalid", lines: []string{"max-age =100"}},
		{name: "RFC8941 4.2 space after equals invalid", lines: []string{"max-age= 100"}},
		{name: "RFC8941 4.2.3.3 upper-case key invalid", lines: []string{"MaX-aGe=3600"}},
		{name: "RFC8941 4.2 trailing comma invalid", lines: []string{"max-age=5,"}},
		{name: "RFC8941 4.2.4 sixteen digits invalid", lines: []string{"foo=1234567890123456"}},
		{name: "RFC8941 4.2.4 four fraction digits invalid", lines: []string{"foo=1.2345"}},
		{name: "RFC8941 4.2.4 no fraction digit invalid", lines: []string{"foo=1."}},
		{name: "RFC8941 4.2.5 bad escape invalid", lines: []string{`foo="a\b"`}},
		{name: "RFC8941 4.2.5 unterminated string invalid", lines: []string{`foo="ab`}},
		{name: "RFC8941 4.2.8 bad boolean invalid", lines: []string{"foo=?2"}},
		{name: "RFC8941 4.2.7 bad byte sequence invalid", lines: []string{"foo=:a*b:"}},
		{name: "RFC8941 4.2.1 unterminated inner list invalid", lines: []string{"foo=(a b"}},
		{name: "RFC8941 4.2.1 inner list without space invalid", lines: []string{`foo=("a""b")`}},
		{name: "RFC8941 4.2 tab at start invalid", lines: []string{"\tmax-age=5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := ParseCDNCacheControl(tc.lines)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%v)", ok, tc.ok, d)
			}
			if !ok {
				return
			}
			if tc.maxAge > 0 {
				if got, _ := d.Seconds("max-age"); got != tc.maxAge {
					t.Errorf("max-age = %v, want %v", got, tc.maxAge)
				}
			}
			for _, name := range tc.has {
				if !d.Has(name) {
					t.Errorf("missing %s in %v", name, d)
				}
			}
			if d.Has("no-store") && tc.name == "RFC9213 2.1 boolean false is absent" {
				t.Error("no-store=?0 counted as present")
			}
		})
	}
}

func TestEffective(t *testing.T) {
	tests := []struct {
		name    string
		h       []string
		source  Source
		noStore bool
		maxAge  time.Duration
	}{
		{"RFC9213 2.1 CDN field wins", []string{"Cache-Control", "no-store", "CDN-Cache-Control", "max-age=10000"}, SourceCDN, false, 10000 * time.Second},
		{"RFC9213 2.1 CDN no-store wins over CC freshness", []string{"Cache-Control", "max-age=10000", "CDN-Cache-Control", "no-store"}, SourceCDN, true, 0},
		{"RFC9213 2.1 invalid CDN field ignored", []string{"Cache-Control", "no-store", "CDN-Cache-Control", "max-age=10000, &&&&&"}, SourceCacheControl, true, 0},
		{"RFC9213 2.1 empty CDN field ignored", []string{"Cache-Control", "max-age=7", "CDN-Cache-Control", ""}, SourceCacheControl, false, 7 * time.Second},
		{"RFC9111 5.2 no CDN field", []string{"Cache-Control", "max-age=7"}, SourceCacheControl, false, 7 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, src := Effective(hdr(tc.h...))
			if src != tc.source || d.Has("no-store") != tc.noStore {
				t.Fatalf("source %v no-store %v; want %v %v", src, d.Has("no-store"), tc.source, tc.noStore)
			}
			if got, _ := d.Seconds("max-age"); got != tc.maxAge {
				t.Errorf("max-age = %v, want %v", got, tc.maxAge)
			}
		})
	}
}
