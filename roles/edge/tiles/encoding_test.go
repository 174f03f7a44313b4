package tiles

import (
	"net/http"
	"testing"
)

func TestAcceptsCoding(t *testing.T) {
	for _, c := range []struct {
		lines  []string // nil: no Accept-Encoding field
		coding string
		want   bool
	}{
		{nil, "gzip", true},
		{nil, "zstd", true},
		{[]string{""}, "gzip", false},
		{[]string{"  "}, "br", false},
		{[]string{"identity"}, "gzip", false},
		{[]string{"gzip"}, "gzip", true},
		{[]string{"GZip"}, "gzip", true},
		{[]string{"x-gzip"}, "gzip", true},
		{[]string{"gzip;q=0"}, "gzip", false},
		{[]string{"gzip; q=0.000"}, "gzip", false},
		{[]string{"gzip;Q=0.001"}, "gzip", true},
		{[]string{"gzip;q=1.000"}, "gzip", true},
		{[]string{"gzip;q=1.5"}, "gzip", false},   // invalid q: element ignored
		{[]string{"gzip;q=abc, *"}, "gzip", true}, // … so * decides
		{[]string{"gzip;q=0.1234"}, "gzip", false},
		{[]string{"br, deflate"}, "gzip", false},
		{[]string{"br, deflate"}, "br", true},
		{[]string{"*"}, "zstd", true},
		{[]string{"*;q=0"}, "gzip", false},
		{[]string{"*;q=0, gzip"}, "gzip", true},
		{[]string{"*, gzip;q=0"}, "gzip", false},
		{[]string{"gzip;q=0", "gzip"}, "gzip", false}, // first occurrence wins
		{[]string{"br", "gzip;q=0.5"}, "gzip", true},  // several lines form one list
		{[]string{"gzip;level=9;q=0"}, "gzip", false},
		{[]string{" , ,gzip , "}, "gzip", true},
		{[]string{"zstd"}, "zstd", true},
		{[]string{"zstd;q=0, br"}, "zstd", false},
	} {
		h := http.Header{}
		for _, l := range c.lines {
			h.Add("Accept-Encoding", l)
		}
		if got := acceptsCoding(h, c.coding); got != c.want {
			t.Errorf("%q %s: %v", c.lines, c.coding, got)
		}
	}
}

func TestParseQ(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "1": 1000, "0.": 0, "1.": 1000, "0.5": 500, "0.05": 50, "0.125": 125,
		"1.0": 1000, "1.000": 1000} {
		if got, ok := parseQ(s); !ok || got != want {
			t.Errorf("%q: %d %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "2", "0.1234", "1.001", ".5", "0,5", "-0", "1.0000", "0x"} {
		if _, ok := parseQ(s); ok {
			t.Errorf("%q accepted", s)
		}
	}
}
