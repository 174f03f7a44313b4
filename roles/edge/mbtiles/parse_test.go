package mbtiles

import (
	"errors"
	"testing"
)

func TestParseBounds(t *testing.T) {
	cases := []struct {
		in   string
		want Bounds
		ok   bool
	}{
		{"-180,-85.0511,180,85.0511", Bounds{-180, -85.0511, 180, 85.0511}, true},
		{" -1.5 , 2 , 3 , 4.25 ", Bounds{-1.5, 2, 3, 4.25}, true},
		{"0,0,0,0", Bounds{}, true},
		{"", Bounds{}, false},
		{"1,2,3", Bounds{}, false},
		{"1,2,3,4,5", Bounds{}, false},
		{"a,b,c,d", Bounds{}, false},
		{"-181,0,0,1", Bounds{}, false},
		{"0,-91,1,1", Bounds{}, false},
		{"10,0,5,1", Bounds{}, false}, // west > east
		{"0,10,1,5", Bounds{}, false}, // south > north
		{"NaN,0,1,1", Bounds{}, false},
		{"-Inf,0,1,1", Bounds{}, false},
		{"1e999,0,1,1", Bounds{}, false},
	}
	for _, c := range cases {
		got, ok := ParseBounds(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseBounds(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseCenter(t *testing.T) {
	cases := []struct {
		in          string
		want        Center
		hasZoom, ok bool
	}{
		{"-75.937500,38.788894,6", Center{-75.9375, 38.788894, 6}, true, true},
		{"0,20,0", Center{0, 20, 0}, true, true},
		{"1,2", Center{1, 2, 0}, false, true},
		{"1, 2, 6.0", Center{1, 2, 6}, true, true},
		{"1,2,6.5", Center{}, false, false},
		{"1,2,-1", Center{}, false, false},
		{"1,2,32", Center{}, false, false},
		{"1", Center{}, false, false},
		{"1,2,3,4", Center{}, false, false},
		{"200,0", Center{}, false, false},
		{"0,95,1", Center{}, false, false},
		{"x,y,z", Center{}, false, false},
		{"", Center{}, false, false},
	}
	for _, c := range cases {
		got, hz, ok := ParseCenter(c.in)
		if got != c.want || hz != c.hasZoom || ok != c.ok {
			t.Errorf("ParseCenter(%q) = %+v, %v, %v; want %+v, %v, %v", c.in, got, hz, ok, c.want, c.hasZoom, c.ok)
		}
	}
}

// TestCenterDefaults exercises Pack.Bounds and Pack.Center on metadata
// without the builder: the fields they read are set directly.
func TestCenterDefaults(t *testing.T) {
	cases := []struct {
		name   string
		meta   map[string]string
		minZ   int
		maxZ   int
		bounds Bounds
		center Center
	}{
		{"nothing", nil, 2, 5, DefaultBounds, Center{0, 0, 2}},
		{"bounds only", map[string]string{"bounds": "0,0,10,20"}, 0, 3, Bounds{0, 0, 10, 20}, Center{5, 10, 0}},
		{"center without zoom", map[string]string{"center": "1,2"}, 3, 4, DefaultBounds, Center{1, 2, 3}},
		{"center zoom below range", map[string]string{"center": "1,2,0"}, 3, 4, DefaultBounds, Center{1, 2, 3}},
		{"center zoom above range", map[string]string{"center": "1,2,9"}, 3, 4, DefaultBounds, Center{1, 2, 4}},
		{"invalid both", map[string]string{"bounds": "x", "center": "y"}, 1, 1, DefaultBounds, Center{0, 0, 1}},
	}
	for _, c := range cases {
		p := &Pack{meta: c.meta, minZoom: c.minZ, maxZoom: c.maxZ}
		if b := p.Bounds(); b != c.bounds {
			t.Errorf("%s: Bounds = %+v, want %+v", c.name, b, c.bounds)
		}
		if got := p.Center(); got != c.center {
			t.Errorf("%s: Center = %+v, want %+v", c.name, got, c.center)
		}
	}
}

func TestVectorLayers(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{`{"vector_layers": [ {"id":"cities"} ]}`, `[ {"id":"cities"} ]`},
		{`{"vector_layers": []}`, `[]`},
		{`{"vector_layers": {"id":"x"}}`, ``},
		{`{"other": 1}`, ``},
		{`[1,2]`, ``},
		{`not json`, ``},
		{``, ``},
	}
	for _, c := range cases {
		if got := string(vectorLayers(c.in)); got != c.want {
			t.Errorf("vectorLayers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEncodingOf(t *testing.T) {
	cases := []struct {
		in   []byte
		want Encoding
		ce   string
	}{
		{[]byte{0x1f, 0x8b, 0x08}, EncodingGzip, "gzip"},
		{[]byte{0x1f, 0x8b}, EncodingGzip, "gzip"},
		{[]byte{0x1f}, EncodingNone, ""},
		{[]byte{0x8b, 0x1f}, EncodingNone, ""},
		{nil, EncodingNone, ""},
		{[]byte(`{"foo":"bar"}`), EncodingNone, ""},
	}
	for _, c := range cases {
		if got := EncodingOf(c.in); got != c.want || got.ContentEncoding() != c.ce {
			t.Errorf("EncodingOf(% x) = %v %q, want %v %q", c.in, got, got.ContentEncoding(), c.want, c.ce)
		}
	}
	if EncodingNone.String() != "none" || EncodingGzip.String() != "gzip" {
		t.Error("Encoding.String")
	}
}

func TestCheckHeader(t *testing.T) {
	cases := []struct {
		in []byte
		ok bool
	}{
		{[]byte(sqliteMagic), true},
		{[]byte(sqliteMagic + "trailing"), true},
		{[]byte(sqliteMagic[:15]), false},
		{nil, false},
		{[]byte("SQLite format 4\x00"), false},
		{[]byte("sqlite format 3\x00"), false},
		{[]byte("PMTiles\x03\x00\x00\x00\x00\x00\x00\x00\x00"), false},
	}
	for _, c := range cases {
		err := CheckHeader(c.in)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotSQLite)) {
			t.Errorf("CheckHeader(%q) = %v, want ok=%v", c.in, err, c.ok)
		}
	}
}
