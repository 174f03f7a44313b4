package httpcache

import (
	"net/http"
	"slices"
	"testing"
)

func TestParseVary(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
		star  bool
	}{
		{"RFC9110 12.5.5 one name", []string{"Foo"}, []string{"Foo"}, false},
		{"RFC9110 12.5.5 list canonicalised", []string{"foo, BAR ,baz"}, []string{"Foo", "Bar", "Baz"}, false},
		{"RFC9110 12.5.5 lines and duplicates", []string{"Foo", "foo, Bar"}, []string{"Foo", "Bar"}, false},
		{"RFC9110 12.5.5 empty members", []string{", ,Foo,"}, []string{"Foo"}, false},
		{"RFC9110 12.5.5 star", []string{"*"}, nil, true},
		{"RFC9110 12.5.5 star star", []string{"*, *"}, nil, true},
		{"RFC9110 12.5.5 star on two lines", []string{"*", "*"}, nil, true},
		{"RFC9110 12.5.5 empty then star", []string{", *"}, nil, true},
		{"RFC9110 12.5.5 empty line then star line", []string{"", "*"}, nil, true},
		{"RFC9110 12.5.5 star and name", []string{"*, Foo"}, []string{"Foo"}, true},
		{"RFC9110 12.5.5 name and star", []string{"Foo, *"}, []string{"Foo"}, true},
		{"RFC9110 12.5.5 absent", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, star := ParseVary(http.Header{"Vary": tc.lines})
			if !slices.Equal(got, tc.want) || star != tc.star {
				t.Errorf("ParseVary = %v, %v; want %v, %v", got, star, tc.want, tc.star)
			}
		})
	}
}

func TestNormalizedValue(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
		ok    bool
	}{
		{"spec 7.4 plain", []string{"1"}, "1", true},
		{"spec 7.4 whitespace around commas removed", []string{" 1, 2 "}, "1,2", true},
		{"spec 7.4 lines combined", []string{"1", "2"}, "1,2", true},
		{"spec 7.4 list and lines equal", []string{"1, 2"}, "1,2", true},
		{"spec 7.4 inner spaces kept", []string{"a b"}, "a b", true},
		{"spec 7.4 empty value present", []string{""}, "", true},
		{"spec 7.4 absent", nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, l := range tc.lines {
				h.Add("Foo", l)
			}
			got, ok := NormalizedValue(h, "Foo")
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestVaryMatches(t *testing.T) {
	tests := []struct {
		name    string
		vary    string
		stored  []string // request header of the stored response
		request []string
		want    bool
	}{
		{"RFC9111 4.1 match", "Foo", []string{"Foo", "1"}, []string{"Foo", "1"}, true},
		{"RFC9111 4.1 no match", "Foo", []string{"Foo", "1"}, []string{"Foo", "2"}, false},
		{"RFC9111 4.1 request omits field", "Foo", []string{"Foo", "1"}, nil, false},
		{"RFC9111 4.1 other fields not in key", "Foo", []string{"Foo", "1", "Other", "2"}, []string{"Foo", "1", "Other", "3"}, true},
		{"RFC9111 4.1 two-way match", "Foo, Bar", []string{"Foo", "1", "Bar", "abc"}, []string{"Foo", "1", "Bar", "abc"}, true},
		{"RFC9111 4.1 two-way mismatch", "Foo, Bar", []string{"Foo", "1", "Bar", "abc"}, []string{"Foo", "2", "Bar", "abc"}, false},
		{"RFC9111 4.1 two-way omit", "Foo, Bar", []string{"Foo", "1"}, nil, false},
		{"RFC9111 4.1 three-way order", "Foo, Bar, Baz", []string{"Foo", "1", "Bar", "abc4", "Baz", "789"}, []string{"Foo", "1", "Bar", "abc", "Baz", "789"}, false},
		{"RFC9111 4.1 absent on both sides", "Foo, Bar, Baz", []string{"Foo", "1", "Baz", "789"}, []string{"Foo", "1", "Baz", "789"}, true},
		{"RFC9111 4.1 normalise whitespace", "Foo", []string{"Foo", "1,2"}, []string{"Foo", " 1, 2 "}, true},
		{"RFC9111 4.1 normalise combined lines", "Foo", []string{"Foo", "1, 2"}, []string{"Foo", "1", "Foo", "2"}, true},
		{"RFC9111 4.1 case-insensitive names", "foo", []string{"FOO", "1"}, []string{"fOo", "1"}, true},
		{"RFC9111 4.1 present empty vs absent", "Foo", []string{"Foo", ""}, nil, false},
		{"RFC9111 4.1 star never matches", "*", nil, nil, false},
		{"RFC9111 4.1 no Vary always matches", "", []string{"Foo", "1"}, []string{"Foo", "2"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hdr("Cache-Control", "max-age=60")
			if tc.vary != "" {
				h.Set("Vary", tc.vary)
			}
			st := NewStored(getReq(hdr(tc.stored...)), resp(200, h))
			if got := VaryMatches(st, hdr(tc.request...)); got != tc.want {
				t.Errorf("VaryMatches = %v, want %v (selecting %+v)", got, tc.want, st.Selecting)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	mk := func(foo string, date float64, rt float64) *Stored {
		r := resp(200, hdr("Vary", "Foo", "Date", httpDate(date), "Cache-Control", "max-age=60"))
		r.ResponseTime = at(rt)
		return NewStored(getReq(hdr("Foo", foo)), r)
	}
	variants := []*Stored{mk("1", 0, 0), mk("2", 0, 0), nil, mk("1", 10, 10), mk("1", 10, 11), mk("1", 5, 20)}
	tests := []struct {
		name string
		req  []string
		want int
	}{
		{"RFC9111 4.1 most recent Date then response time", []string{"Foo", "1"}, 4},
		{"RFC9111 4.1 single match", []string{"Foo", "2"}, 1},
		{"RFC9111 4.1 no match", []string{"Foo", "3"}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Select(hdr(tc.req...), variants); got != tc.want {
				t.Errorf("Select = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestEndToEnd(t *testing.T) {
	in := hdr(
		"Connection", "a, B", "a", "1", "b", "2", "c", "3",
		"Keep-Alive", "x", "Proxy-Connection", "x", "TE", "x", "Transfer-Encoding", "chunked", "Upgrade", "x", "Trailer", "x",
		"Proxy-Authenticate", "x", "Proxy-Authentication-Info", "x", "Proxy-Authorization", "x",
		"Set-Cookie", "a=b", "Set-Cookie", "c=d", "WWW-Authenticate", "x", "Strict-Transport-Security", "x", "Content-Type", "text/plain",
	)
	in["x-lower"] = []string{"v"} // non-canonical key
	got := EndToEnd(in)
	for _, gone := range []string{"Connection", "A", "B", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding", "Upgrade", "Trailer", "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization"} {
		if _, ok := got[gone]; ok {
			t.Errorf("RFC9111 3.1: %s kept", gone)
		}
	}
	if v := got.Values("Set-Cookie"); len(v) != 2 {
		t.Errorf("spec 7.2: Set-Cookie lines %v", v)
	}
	for _, kept := range []string{"C", "Www-Authenticate", "Strict-Transport-Security", "Content-Type", "X-Lower"} {
		if _, ok := got[kept]; !ok {
			t.Errorf("RFC9111 3.1: %s dropped", kept)
		}
	}
	got.Add("C", "4")
	if len(in.Values("C")) != 1 {
		t.Error("EndToEnd shares slices with its input")
	}
}

func TestNotModifiedHeader(t *testing.T) {
	st := hdr("ETag", `"a"`, "Last-Modified", httpDate(-10), "Cache-Control", "max-age=5", "Content-Location", "/x",
		"Date", httpDate(0), "Expires", httpDate(5), "Vary", "Foo", "Content-Type", "text/plain", "Content-Length", "5", "X-Other", "1")
	got := NotModifiedHeader(st)
	if len(got) != 7 {
		t.Fatalf("RFC9110 15.4.5: got %v", got)
	}
	for _, f := range []string{"Content-Type", "Content-Length", "X-Other"} {
		if got.Get(f) != "" {
			t.Errorf("%s in 304", f)
		}
	}
	if got.Get("ETag") != `"a"` || got.Get("Content-Location") != "/x" {
		t.Errorf("ETag %q, Content-Location %q: keys must be canonical for Get", got.Get("ETag"), got.Get("Content-Location"))
	}
}
