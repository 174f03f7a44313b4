package httpcache

import (
	"testing"
	"time"
)

func TestParseCacheControl(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Directives
	}{
		{"RFC9111 5.2 empty", []string{""}, Directives{}},
		{"RFC9111 5.2 bare directives", []string{"no-store, no-cache"}, Directives{"no-store": {}, "no-cache": {}}},
		{"RFC9111 5.2 names case-insensitive", []string{"No-StOrE, MaX-aGe=3"}, Directives{"no-store": {}, "max-age": {Value: "3", HasValue: true}}},
		{"RFC9111 5.2 token argument", []string{"max-age=60"}, Directives{"max-age": {Value: "60", HasValue: true}}},
		{"RFC9111 5.2 quoted argument", []string{`max-age="60"`}, Directives{"max-age": {Value: "60", HasValue: true}}},
		{"RFC9111 5.2 quoted comma stays in argument", []string{`no-cache="a, b", public`}, Directives{"no-cache": {Value: "a, b", HasValue: true}, "public": {}}},
		{"RFC9111 5.2 quoted directive-like text ignored", []string{`extension="max-age=3600", max-age=1`}, Directives{"extension": {Value: "max-age=3600", HasValue: true}, "max-age": {Value: "1", HasValue: true}}},
		{"RFC9111 5.2 quoted-pair", []string{`x="a\"b\\c"`}, Directives{"x": {Value: `a"b\c`, HasValue: true}}},
		{"RFC9111 4.2.1 first occurrence wins same line", []string{"max-age=1800, max-age=1"}, Directives{"max-age": {Value: "1800", HasValue: true}}},
		{"RFC9111 4.2.1 first occurrence wins across lines", []string{"max-age=1", "max-age=1800"}, Directives{"max-age": {Value: "1", HasValue: true}}},
		{"RFC9111 5.2 empty members skipped", []string{" , ,public,, "}, Directives{"public": {}}},
		{"RFC9110 5.6.2 space before equals malformed", []string{"max-age =3600"}, Directives{"max-age": {Value: "3600", HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.2 space after equals malformed", []string{"max-age= 3600"}, Directives{"max-age": {Value: "3600", HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.2 empty argument malformed", []string{"max-age="}, Directives{"max-age": {HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.4 unterminated quote malformed", []string{`max-age="60`}, Directives{"max-age": {Value: "60", HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.4 junk after quote malformed", []string{`max-age="60"x`}, Directives{"max-age": {Value: "60", HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.2 non-token argument malformed", []string{"max-age=6 0"}, Directives{"max-age": {Value: "6 0", HasValue: true, Malformed: true}}},
		{"RFC9110 5.6.2 non-token name skipped", []string{`"max-age"=60, a b, public`}, Directives{"public": {}}},
		{"RFC9111 5.2 unknown directives kept", []string{"foobar, max-age=3600"}, Directives{"foobar": {}, "max-age": {Value: "3600", HasValue: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseCacheControl(tc.lines)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: got %+v, want %+v", k, got[k], v)
				}
			}
		})
	}
}

func TestDirectiveSeconds(t *testing.T) {
	tests := []struct {
		name string
		line string
		want time.Duration
		ok   bool
	}{
		{name: "RFC9111 1.2.2 digits", line: "max-age=3600", want: 3600 * time.Second, ok: true},
		{name: "RFC9111 1.2.2 leading zeros", line: "max-age=003600", want: 3600 * time.Second, ok: true},
		{name: "RFC9111 1.2.2 quoted digits", line: `max-age="3600"`, want: 3600 * time.Second, ok: true},
		{name: "RFC9111 1.2.2 zero", line: "max-age=0", want: 0, ok: true},
		{name: "RFC9111 1.2.2 saturates at 2^31", line: "max-age=2147483648", want: MaxDeltaSeconds * time.Second, ok: true},
		{name: "RFC9111 1.2.2 huge saturates", line: "max-age=99999999999999999999999", want: MaxDeltaSeconds * time.Second, ok: true},
		{name: "RFC9111 1.2.2 negative invalid", line: "max-age=-100"},
		{name: "RFC9111 1.2.2 decimal invalid", line: "max-age=3600.0"},
		{name: "RFC9111 1.2.2 leading alpha invalid", line: "max-age=a3600"},
		{name: "RFC9111 1.2.2 trailing alpha invalid", line: "max-age=3600a"},
		{name: "RFC9111 1.2.2 single quotes invalid", line: "max-age='3600'"},
		{name: "RFC9111 1.2.2 space before equals invalid", line: "max-age =3600"},
		{name: "RFC9111 1.2.2 space after equals invalid", line: "max-age= 3600"},
		{name: "RFC9111 1.2.2 no argument invalid", line: "max-age"},
		{name: "RFC9111 1.2.2 absent", line: "public"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := ParseCacheControl([]string{tc.line})
			got, ok := d.Seconds("max-age")
			if got != tc.want || ok != tc.ok {
				t.Errorf("Seconds = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
			lt, present := d.lifetimeDirective("max-age")
			if present != d.Has("max-age") || lt != tc.want {
				t.Errorf("lifetimeDirective = %v, %v; want %v, %v (a bad max-age counts as 0)", lt, present, tc.want, d.Has("max-age"))
			}
		})
	}
}

func TestRequestDirectives(t *testing.T) {
	tests := []struct {
		name        string
		h           []string
		wantNoCache bool
	}{
		{"RFC9111 5.4 Pragma no-cache without Cache-Control", []string{"Pragma", "no-cache"}, true},
		{"RFC9111 5.4 Pragma list", []string{"Pragma", "foo, No-Cache"}, true},
		{"RFC9111 5.4 Pragma ignored with Cache-Control", []string{"Pragma", "no-cache", "Cache-Control", "max-stale"}, false},
		{"RFC9111 5.4 Pragma extension ignored", []string{"Pragma", "unrecognised-extension"}, false},
		{"RFC9111 5.2.1.4 Cache-Control no-cache", []string{"Cache-Control", "no-cache"}, true},
		{"RFC9111 5.4 nothing", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequestDirectives(hdr(tc.h...)).Has("no-cache"); got != tc.wantNoCache {
				t.Errorf("no-cache = %v, want %v", got, tc.wantNoCache)
			}
		})
	}
}

func TestPolicyIgnoresRequestDirectives(t *testing.T) {
	p := DefaultPolicy()
	p.IgnoreRequestDirectives = true
	if d := p.requestDirectives(hdr("Cache-Control", "no-store")); d.Has("no-store") {
		t.Fatal("request directives honoured despite IgnoreRequestDirectives")
	}
}
