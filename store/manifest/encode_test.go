package manifest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// The test vector of docs/index.md §2.
const (
	vector   = `{"entries":{"hello.txt":{"id":"b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24","size":11,"type":"text/plain; charset=utf-8"}},"meta":{},"version":1}`
	vectorID = "b3:ced5d8e546f32566fd3e768ca208299be821a2147db8894d04492243f22fa331"
	helloID  = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
)

func mustID(t testing.TB, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// idN returns a distinct valid id for test entries.
func idN(n int) store.ID { return store.Sum([]byte(fmt.Sprint(n))) }

func vectorManifest(t testing.TB) manifest.ManifestV1 {
	return manifest.ManifestV1{Entries: map[string]manifest.Entry{
		"hello.txt": {ID: mustID(t, helloID), Size: 11, Type: "text/plain; charset=utf-8"},
	}}
}

func TestVector(t *testing.T) {
	if len(vector) != 169 {
		t.Fatalf("vector is %d bytes, want 169", len(vector))
	}
	b, err := manifest.Encode(vectorManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != vector {
		t.Fatalf("Encode:\n got %s\nwant %s", b, vector)
	}
	id, err := manifest.ID(vectorManifest(t))
	if err != nil || id.String() != vectorID {
		t.Fatalf("ID = %v, %v; want %s", id, err, vectorID)
	}
	if got := store.Sum([]byte(vector)).String(); got != vectorID {
		t.Fatalf("Sum(vector) = %s", got)
	}
	m, err := manifest.Parse([]byte(vector))
	if err != nil {
		t.Fatal(err)
	}
	want := vectorManifest(t)
	want.Meta = map[string]string{}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Parse(vector) = %+v", m)
	}
	if !manifest.IsCanonical([]byte(vector)) {
		t.Fatal("vector not canonical")
	}
}

func TestEncodeEmptyAndNilMaps(t *testing.T) {
	b, err := manifest.Encode(manifest.ManifestV1{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"entries":{},"meta":{},"version":1}`; string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
}

// TestJCSOrder checks that keys are ordered by UTF-16 code units, not by
// UTF-8 bytes (Go's map order). Code units by hand:
//
//	"a"          0061
//	"\U0001F600" D83D DE00 (UTF-8 F0 9F 98 80)
//	"\uE000"     E000      (UTF-8 EE 80 80)
//	"\uFF61"     FF61      (UTF-8 EF BD A1)
//	"\uFFFD"     FFFD      (UTF-8 EF BF BD)
//	"\U00010000" D800 DC00 (UTF-8 F0 90 80 80)
//
// UTF-16 order: a < 𐀀 (D800) < 😀 (D83D) < E000 < FF61 < FFFD; UTF-8 byte
// order would put both non-BMP characters last.
func TestJCSOrder(t *testing.T) {
	paths := []string{"\uFFFD", "\U0001F600", "\uFF61", "a", "\uE000", "\U00010000"}
	wantOrder := []string{"a", "\U00010000", "\U0001F600", "\uE000", "\uFF61", "\uFFFD"}
	m := manifest.ManifestV1{Entries: map[string]manifest.Entry{}, Meta: map[string]string{}}
	for _, p := range paths {
		m.Entries[p] = manifest.Entry{ID: idN(0), Size: 1, Type: "text/plain"}
		m.Meta[p] = "v"
	}
	b, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var entries, meta strings.Builder
	for i, p := range wantOrder {
		if i > 0 {
			entries.WriteByte(',')
			meta.WriteByte(',')
		}
		fmt.Fprintf(&entries, `"%s":{"id":"%s","size":1,"type":"text/plain"}`, p, idN(0))
		fmt.Fprintf(&meta, `"%s":"v"`, p)
	}
	want := `{"entries":{` + entries.String() + `},"meta":{` + meta.String() + `},"version":1}`
	if string(b) != want {
		t.Fatalf("got  %q\nwant %q", b, want)
	}
	roundTrip(t, m)
}

// TestEncodeNoHTMLEscapes: encoding/json writes \u003c, \u0026, \u2028;
// JCS requires the characters themselves.
func TestEncodeNoHTMLEscapes(t *testing.T) {
	p := "a<b>&c\u2028d\u2029e"
	m := manifest.ManifestV1{
		Entries: map[string]manifest.Entry{p: {ID: idN(1), Size: 0, Type: "text/html"}},
		Meta:    map[string]string{"k<&>": "tab\there \"q\" \\ \u2028 \x01 \x7f"},
	}
	b, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`, `\u007f`} {
		if bytes.Contains(b, []byte(bad)) {
			t.Errorf("output contains %s: %s", bad, b)
		}
	}
	for _, good := range []string{`"a<b>&c` + "\u2028d\u2029e" + `"`, `"k<&>"`, `tab\there \"q\" \\ ` + "\u2028" + ` \u0001 ` + "\x7f"} {
		if !bytes.Contains(b, []byte(good)) {
			t.Errorf("output lacks %q: %s", good, b)
		}
	}
	roundTrip(t, m)
}

func roundTrip(t *testing.T, m manifest.ManifestV1) {
	t.Helper()
	b, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if !manifest.IsCanonical(b) {
		t.Fatalf("Encode output not canonical: %s", b)
	}
	got, err := manifest.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}
}

func TestEncodeRejects(t *testing.T) {
	ok := manifest.Entry{ID: idN(1), Size: 1, Type: "text/plain"}
	long := strings.Repeat("x", 255)
	cases := []struct {
		name    string
		entries map[string]manifest.Entry
		meta    map[string]string
		want    string
	}{
		{"empty path", map[string]manifest.Entry{"": ok}, nil, "path length 0"},
		{"dotdot", map[string]manifest.Entry{"a/../b": ok}, nil, `".." segment`},
		{"backslash", map[string]manifest.Entry{`a\b`: ok}, nil, "forbidden byte 0x5c"},
		{"bad utf8 path", map[string]manifest.Entry{"a\xffb": ok}, nil, "not valid UTF-8"},
		{"negative size", map[string]manifest.Entry{"a": {ID: idN(1), Size: -1, Type: "a/b"}}, nil, "outside 0...2^53-1"},
		{"size 2^53", map[string]manifest.Entry{"a": {ID: idN(1), Size: 1 << 53, Type: "a/b"}}, nil, "outside 0...2^53-1"},
		{"empty type", map[string]manifest.Entry{"a.txt": {ID: idN(1), Size: 1}}, nil, `entries["a.txt"].type: media type length 0`},
		{"bad type", map[string]manifest.Entry{"a": {ID: idN(1), Size: 1, Type: "a b"}}, nil, "bad media type"},
		{"long type", map[string]manifest.Entry{"a": {ID: idN(1), Size: 1, Type: "a/" + long}}, nil, "length 257"},
		{"dir prefix", map[string]manifest.Entry{"a": ok, "a-b": ok, "a.b": ok, "a/b": ok}, nil, `entries["a"]: path is also a directory (of "a/b")`},
		{"deep dir prefix", map[string]manifest.Entry{"x/y": ok, "x/y/z/w": ok, "x/y-": ok}, nil, `entries["x/y"]: path is also a directory (of "x/y/z/w")`},
		{"meta empty key", nil, map[string]string{"": "v"}, `meta[""]: key length 0`},
		{"meta long key", nil, map[string]string{strings.Repeat("k", 129): "v"}, "key length 129"},
		{"meta long value", nil, map[string]string{"k": strings.Repeat("v", 4097)}, "value of 4097 bytes"},
		{"meta bad utf8", nil, map[string]string{"k": "\xff"}, "not valid UTF-8"},
		{"meta 65 keys", nil, manyMeta(65), "65 keys exceed 64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := manifest.Encode(manifest.ManifestV1{Entries: c.entries, Meta: c.meta})
			checkErr(t, err, c.want)
		})
	}
}

func manyMeta(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprint("k", i)] = "v"
	}
	return m
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("error %v does not wrap ErrInvalid", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

func TestEncodeLimits(t *testing.T) {
	// At the limits every field is accepted.
	seg := strings.Repeat("s", 255)
	p := strings.Join([]string{seg, seg, seg, seg[:254], "x"}, "/") // 1024 bytes
	if len(p) != 1024 {
		t.Fatalf("len %d", len(p))
	}
	m := manifest.ManifestV1{
		Entries: map[string]manifest.Entry{p: {ID: idN(1), Size: manifest.MaxSize, Type: "a/" + strings.Repeat("b", 253)}},
		Meta:    manyMeta(63),
	}
	m.Meta[strings.Repeat("k", 128)] = strings.Repeat("v", 4096)
	roundTrip(t, m)
}

func TestEncodeTooLarge(t *testing.T) {
	m := manifest.ManifestV1{Entries: map[string]manifest.Entry{}}
	seg := strings.Repeat("p", 250)
	for i := 0; i < 8200; i++ { // ~8200 × ~1130 bytes > 8 MiB
		p := fmt.Sprintf("%s/%s/%s/%s/%06d", seg, seg, seg, seg[:240], i)
		m.Entries[p] = manifest.Entry{ID: idN(i), Size: 1, Type: "text/plain"}
	}
	_, err := manifest.Encode(m)
	checkErr(t, err, "exceeds 8388608 bytes")
}

func TestIsCanonical(t *testing.T) {
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(vector), "", "  "); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   string
		want bool
	}{
		{"vector", vector, true},
		{"empty manifest", `{"entries":{},"meta":{},"version":1}`, true},
		{"indented", indented.String(), false},
		{"trailing newline", vector + "\n", false},
		{"leading space", " " + vector, false},
		{"space after colon", strings.Replace(vector, `"size":11`, `"size": 11`, 1), false},
		{"reordered keys", `{"version":1,"entries":{},"meta":{}}`, false},
		{"reordered entry keys", strings.Replace(vector, `"size":11,"type":"text/plain; charset=utf-8"`, `"type":"text/plain; charset=utf-8","size":11`, 1), false},
		{"escaped slash", strings.Replace(vector, `text/plain`, `text\/plain`, 1), false},
		{"escaped letter", strings.Replace(vector, `hello`, `\u0068ello`, 1), false},
		{"missing meta", `{"entries":{},"version":1}`, false},
		{"missing type", `{"entries":{"a.txt":{"id":"` + helloID + `","size":1}},"meta":{},"version":1}`, false},
		{"invalid", `{"entries":{},"meta":{},"version":2}`, false},
		{"garbage", `nope`, false},
	}
	for _, c := range cases {
		if got := manifest.IsCanonical([]byte(c.in)); got != c.want {
			t.Errorf("%s: IsCanonical = %v, want %v", c.name, got, c.want)
		}
	}
}
