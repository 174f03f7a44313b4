package manifest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ronhq/ron/store/manifest"
)

// ent is a valid entry body for building test manifests.
const ent = `{"id":"` + helloID + `","size":1,"type":"text/plain"}`

// doc wraps an entries body (the text between the braces) in a manifest.
func doc(entries string) string {
	return `{"version":1,"entries":{` + entries + `},"meta":{}}`
}

// withMeta wraps a meta body in a manifest with no entries.
func withMeta(meta string) string {
	return `{"version":1,"entries":{},"meta":{` + meta + `}}`
}

// entry builds a one-entry manifest whose entry body is body.
func entry(body string) string { return doc(`"a":{` + body + `}`) }

const idKV = `"id":"` + helloID + `"`

func TestParseRejects(t *testing.T) {
	seg := strings.Repeat("s", 255)
	big := doc(`"a":` + ent)
	big += strings.Repeat(" ", manifest.MaxBytes+1-len(big))
	cases := []struct {
		name, in, want string
	}{
		// Top level.
		{"empty input", ``, "manifest: unexpected end of input"},
		{"only whitespace", " \n\t", "unexpected end of input"},
		{"array top level", `[]`, "manifest: want an object, got an array"},
		{"string top level", `"x"`, "want an object, got a string"},
		{"null top level", `null`, "want an object, got null"},
		{"number top level", `1`, "want an object, got a number"},
		{"trailing object", doc(``) + `{}`, "trailing data"},
		{"trailing garbage", doc(``) + ` x`, "trailing data"},
		{"truncated", `{"version":1,"entries":{`, "unexpected end of input"},
		{"syntax: missing comma", `{"version":1 "entries":{}}`, "bad JSON"},
		{"syntax: trailing comma", `{"version":1,"entries":{},}`, "bad JSON"},
		{"unknown top field", `{"version":1,"entries":{},"extra":0}`, `manifest: unknown field "extra"`},
		{"unknown entry field", entry(idKV + `,"size":1,"mode":"0644"`), `entries["a"]: unknown field "mode"`},
		{"8 MiB + 1", big, "8388609 bytes exceed 8388608"},
		{"invalid UTF-8", doc(`"a` + "\xff" + `":` + ent), "not valid UTF-8"},
		{"lone high surrogate", doc(`"a\ud800":` + ent), "unpaired high surrogate"},
		{"high surrogate then non-low", doc(`"a\ud800\u0041":` + ent), "unpaired high surrogate"},
		{"lone low surrogate", doc(`"\udc00":` + ent), "unpaired low surrogate"},
		// Duplicate keys.
		{"dup top level", `{"version":1,"version":1,"entries":{}}`, `manifest: duplicate key "version"`},
		{"dup entries field", `{"version":1,"entries":{},"entries":{}}`, `duplicate key "entries"`},
		{"dup path", doc(`"a":` + ent + `,"a":` + ent), `entries: duplicate key "a"`},
		{"dup path via escape", doc(`"a":` + ent + `,"\u0061":` + ent), `entries: duplicate key "a"`},
		{"dup in entry", entry(idKV + `,"size":1,"size":1`), `entries["a"]: duplicate key "size"`},
		{"dup in meta", withMeta(`"k":"1","k":"2"`), `meta: duplicate key "k"`},
		// Version.
		{"missing version", `{"entries":{}}`, "version: missing"},
		{"version 2", `{"version":2,"entries":{}}`, `version: unsupported version "2"`},
		{"version 1.0", `{"version":1.0,"entries":{}}`, `unsupported version "1.0"`},
		{"version 1e0", `{"version":1e0,"entries":{}}`, `unsupported version "1e0"`},
		{"version string", `{"version":"1","entries":{}}`, "version: want the number 1, got a string"},
		{"version bool", `{"version":true,"entries":{}}`, "got a boolean"},
		// Wrong types.
		{"missing entries", `{"version":1}`, "entries: missing"},
		{"entries array", `{"version":1,"entries":[]}`, "entries: want an object, got an array"},
		{"entries null", `{"version":1,"entries":null}`, "entries: want an object, got null"},
		{"entry string", doc(`"a":"b3:x"`), `entries["a"]: want an object, got a string`},
		{"entry array", doc(`"a":[]`), `entries["a"]: want an object, got an array`},
		{"meta array", `{"version":1,"entries":{},"meta":[]}`, "meta: want an object, got an array"},
		{"meta null", `{"version":1,"entries":{},"meta":null}`, "meta: want an object, got null"},
		{"meta number value", withMeta(`"k":1`), `meta["k"]: want a string, got a number`},
		{"meta object value", withMeta(`"k":{}`), `meta["k"]: want a string, got an object`},
		// Ids.
		{"missing id", entry(`"size":1`), `entries["a"].id: missing`},
		{"id number", entry(`"id":1,"size":1`), `entries["a"].id: want a string, got a number`},
		{"id object", entry(`"id":{"x":1},"size":1`), `entries["a"].id: want a string, got an object`},
		{"id uppercase", entry(`"id":"` + strings.ToUpper(helloID[3:]) + `","size":1`), "is not a canonical id"},
		{"id prefix uppercase", entry(`"id":"B3:` + helloID[3:] + `","size":1`), "is not a canonical id"},
		{"id bare hex", entry(`"id":"` + helloID[3:] + `","size":1`), "is not a canonical id"},
		{"id short", entry(`"id":"` + helloID[:66] + `","size":1`), "is not a canonical id"},
		// Sizes.
		{"missing size", entry(idKV), `entries["a"].size: missing`},
		{"size 2^53", entry(idKV + `,"size":9007199254740992`), `size "9007199254740992" exceeds 2^53-1`},
		{"size 2^64", entry(idKV + `,"size":18446744073709551616`), "exceeds 2^53-1"},
		{"size float", entry(idKV + `,"size":1.5`), `size "1.5" is not an integer`},
		{"size 1.0", entry(idKV + `,"size":1.0`), "is not an integer"},
		{"size exponent", entry(idKV + `,"size":1e2`), "is not an integer"},
		{"size negative", entry(idKV + `,"size":-1`), `negative size "-1"`},
		{"size -0", entry(idKV + `,"size":-0`), "negative size"},
		{"size string", entry(idKV + `,"size":"1"`), `entries["a"].size: want an integer, got a string`},
		{"size null", entry(idKV + `,"size":null`), "want an integer, got null"},
		// Types.
		{"type empty", entry(idKV + `,"size":1,"type":""`), `entries["a"].type: media type length 0`},
		{"type 256 bytes", entry(idKV + `,"size":1,"type":"a/` + strings.Repeat("b", 254) + `"`), "media type length 256"},
		{"type no subtype", entry(idKV + `,"size":1,"type":"text/"`), "bad media type"},
		{"type bad parameter", entry(idKV + `,"size":1,"type":"text/plain; charset"`), "bad media type"},
		{"type duplicate parameter", entry(idKV + `,"size":1,"type":"text/plain; a=1; a=2"`), "bad media type"},
		{"type non-ASCII", entry(idKV + `,"size":1,"type":"text/plain; x=\"é\""`), "non-ASCII byte 0xc3"},
		{"type control", entry(idKV + `,"size":1,"type":"text/plain\r\nX: y"`), "byte 0x0d"},
		{"type null", entry(idKV + `,"size":1,"type":null`), `entries["a"].type: want a string, got null`},
		// Paths.
		{"path empty", doc(`"":` + ent), `entries[""]: path length 0`},
		{"path 1025 bytes", doc(`"` + strings.Join([]string{seg, seg, seg, seg[:254], "xx"}, "/") + `":` + ent), "path length 1025"},
		{"segment 256 bytes", doc(`"` + seg + `s":` + ent), "segment of 256 bytes"},
		{"leading slash", doc(`"/a":` + ent), "leading '/'"},
		{"trailing slash", doc(`"a/":` + ent), "trailing '/'"},
		{"empty segment", doc(`"a//b":` + ent), "empty segment"},
		{"dot segment", doc(`"./a":` + ent), `"." segment`},
		{"dotdot segment", doc(`"a/../b":` + ent), `entries["a/../b"]: path has a ".." segment`},
		{"dotdot alone", doc(`"..":` + ent), `".." segment`},
		{"backslash", doc(`"a\\b":` + ent), "forbidden byte 0x5c"},
		{"NUL", doc(`"a\u0000b":` + ent), "forbidden byte 0x00"},
		{"U+001F", doc(`"a\u001fb":` + ent), "forbidden byte 0x1f"},
		{"newline", doc(`"a\nb":` + ent), "forbidden byte 0x0a"},
		{"DEL", doc(`"a` + "\x7f" + `b":` + ent), "forbidden byte 0x7f"},
		{"file is also a dir", doc(`"a/b":` + ent + `,"a":` + ent), `entries["a"]: path is also a directory (of "a/b")`},
		{"file is also a dir, interleaved", doc(`"a":` + ent + `,"a-b":` + ent + `,"a.b":` + ent + `,"a/b/c":` + ent), `entries["a"]: path is also a directory (of "a/b/c")`},
		// Meta limits.
		{"meta 65 keys", withMeta(metaBody(65)), "meta: more than 64 keys"},
		{"meta empty key", withMeta(`"":"v"`), `meta[""]: key length 0`},
		{"meta key 129 bytes", withMeta(`"` + strings.Repeat("k", 129) + `":"v"`), "key length 129"},
		{"meta value 4097 bytes", withMeta(`"k":"` + strings.Repeat("v", 4097) + `"`), `meta["k"]: value of 4097 bytes exceeds 4096`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := manifest.Parse([]byte(c.in))
			checkErr(t, err, c.want)
			if m.Entries != nil || m.Meta != nil {
				t.Errorf("non-zero manifest returned with error: %+v", m)
			}
		})
	}
}

func metaBody(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf(`"k%d":"v"`, i))
	}
	return strings.Join(parts, ",")
}

func TestParseLenient(t *testing.T) {
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(vector), "\r\n", "\t  "); err != nil {
		t.Fatal(err)
	}
	want := vectorManifest(t)
	want.Meta = map[string]string{}
	cases := map[string]string{
		"indented":     " \n" + indented.String() + "\n\t ",
		"reordered":    `{"meta":{},"version":1,"entries":{"hello.txt":{"type":"text/plain; charset=utf-8","size":11,"id":"` + helloID + `"}}}`,
		"missing meta": `{"version":1,"entries":{"hello.txt":{"id":"` + helloID + `","size":11,"type":"text/plain; charset=utf-8"}}}`,
		"escapes":      `{"version":1,"entries":{"hell\u006f.txt":{"id":"b3:\u0064` + helloID[4:] + `","size":11,"type":"text\/plain; charset=utf-8"}}}`,
	}
	for name, in := range cases {
		got, err := manifest.Parse([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v", name, got)
		}
	}
}

func TestParseGuessesType(t *testing.T) {
	in := doc(`"index.html":{` + idKV + `,"size":1},` +
		`"css/site.CSS":{` + idKV + `,"size":2},` +
		`"noext":{` + idKV + `,"size":3},` +
		`"x.unknown-ext-zz":{` + idKV + `,"size":4},` +
		`"dir.d/plain":{` + idKV + `,"size":5},` +
		`"given.html":{` + idKV + `,"size":6,"type":"application/x-custom; q=1"}`)
	m, err := manifest.Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"index.html":       "text/html; charset=utf-8",
		"css/site.CSS":     "text/css; charset=utf-8",
		"noext":            manifest.DefaultType,
		"x.unknown-ext-zz": manifest.DefaultType,
		"dir.d/plain":      manifest.DefaultType,
		"given.html":       "application/x-custom; q=1",
	}
	for p, typ := range want {
		if got := m.Entries[p].Type; got != typ {
			t.Errorf("%s: type %q, want %q", p, got, typ)
		}
	}
	// The guessed types are written out by Encode.
	b, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"noext":{"id":"`+helloID+`","size":3,"type":"application/octet-stream"}`)) {
		t.Errorf("Encode: %s", b)
	}
}

func TestParseAccepts(t *testing.T) {
	seg := strings.Repeat("s", 255)
	p1024 := strings.Join([]string{seg, seg, seg, seg[:254], "x"}, "/")
	atLimit := doc(`"a":` + ent)
	atLimit += strings.Repeat(" ", manifest.MaxBytes-len(atLimit))
	cases := map[string]string{
		"exactly 8 MiB":       atLimit,
		"empty entries":       `{"version":1,"entries":{}}`,
		"size 0":              entry(idKV + `,"size":0`),
		"size 2^53-1":         entry(idKV + `,"size":9007199254740991`),
		"path 1024 bytes":     doc(`"` + p1024 + `":` + ent),
		"path unicode":        doc(`"dïr/ファイル/😀.txt":` + ent),
		"surrogate pair":      doc(`"\ud83d\ude00":` + ent),
		"dots in names":       doc(`"...":` + ent + `,".a/b..":` + ent + `,"a..b":` + ent),
		"siblings not prefix": doc(`"a":` + ent + `,"ab/c":` + ent + `,"a-b/c":` + ent),
		"bare token type":     entry(idKV + `,"size":1,"type":"nope"`),
		"meta at limits":      withMeta(metaBody(63) + `,"` + strings.Repeat("k", 128) + `":"` + strings.Repeat("v", 4096) + `"`),
		"meta empty value":    withMeta(`"k":""`),
		"nested manifest":     entry(idKV + `,"size":1,"type":"` + manifest.MediaType + `"`),
	}
	for name, in := range cases {
		if _, err := manifest.Parse([]byte(in)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
