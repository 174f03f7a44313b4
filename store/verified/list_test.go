package verified_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// Spec vectors (docs/storage.md §1): 102,400 bytes of i mod 251.
const (
	vecID     = "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"
	vecChunk0 = "b3:68d647e619a930e7b1082f74f334b0c65a315725569bdc123f0ee11881717bfe"
	vecChunk1 = "b3:1b314bec1682449387dbf17690bdd41311bdf21f3062998c1b89a631ac26dae2"
	emptyID   = "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	helloID   = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
)

// vecList is the spec vector's list document.
const vecList = `{"id":"` + vecID + `","size":102400,"chunk_size":65536,"chunks":["` + vecChunk0 + `","` + vecChunk1 + `"]}`

func TestParseListVector(t *testing.T) {
	want := storetest.MustID(t, vecID)
	l, err := verified.ParseList([]byte(vecList), want)
	if err != nil {
		t.Fatal(err)
	}
	if l.ID != want || l.Size != 102400 || l.ChunkSize != store.ChunkSize || l.Count() != 2 ||
		l.Chunks[0].String() != vecChunk0 || l.Chunks[1].String() != vecChunk1 {
		t.Fatalf("ParseList = %+v", l)
	}
	built := verified.ListOf(storetest.Pattern(102400))
	if built.ID != want || built.Chunks[0] != l.Chunks[0] || built.Chunks[1] != l.Chunks[1] {
		t.Fatalf("ListOf(pattern) = %+v", built)
	}
	if got := string(l.AppendJSON(nil)); got != vecList {
		t.Fatalf("AppendJSON = %s", got)
	}
	// Whitespace and key order are free.
	spaced := "\n { \"chunks\" : [ \"" + vecChunk0 + "\" , \"" + vecChunk1 + "\" ] ,\t\"chunk_size\":65536, \"size\" : 102400 , \"id\":\"" + vecID + "\" }\n"
	if _, err := verified.ParseList([]byte(spaced), want); err != nil {
		t.Fatalf("reordered, spaced: %v", err)
	}
}

func TestParseListSmallVectors(t *testing.T) {
	for _, tc := range []struct {
		data, id string
	}{
		{"", emptyID},
		{"hello world", helloID},
		{"0123456789abcdef", "b3:b8f6b168214bf501f5a4b84bff9e105cc5c1f3851b798dcb55ffe887391e84b0"},
	} {
		l := verified.ListOf([]byte(tc.data))
		if l.ID.String() != tc.id {
			t.Fatalf("%q: id %s, want %s", tc.data, l.ID, tc.id)
		}
		back, err := verified.ParseList(l.AppendJSON(nil), l.ID)
		if err != nil || back.Size != int64(len(tc.data)) || back.Count() != store.ChunkCount(int64(len(tc.data))) {
			t.Fatalf("%q: round trip %+v, %v", tc.data, back, err)
		}
	}
	if got := string(verified.ListOf(nil).AppendJSON(nil)); got != `{"id":"`+emptyID+`","size":0,"chunk_size":65536,"chunks":[]}` {
		t.Fatalf("empty list JSON = %s", got)
	}
}

func TestParseListMalformed(t *testing.T) {
	want := storetest.MustID(t, vecID)
	c0, c1 := `"`+vecChunk0+`"`, `"`+vecChunk1+`"`
	doc := func(id, size, cs, chunks string) string {
		return `{"id":` + id + `,"size":` + size + `,"chunk_size":` + cs + `,"chunks":[` + chunks + `]}`
	}
	okID := `"` + vecID + `"`
	for _, tc := range []struct {
		name, in, msg string
	}{
		{"wrong id", doc(`"`+helloID+`"`, "102400", "65536", c0+","+c1), "want " + vecID},
		{"uppercase id", doc(strings.ToUpper(okID), "102400", "65536", c0+","+c1), "not a canonical id"},
		{"bare hex id", doc(`"`+vecID[3:]+`"`, "102400", "65536", c0+","+c1), "not a canonical id"},
		{"id number", doc("1", "102400", "65536", c0+","+c1), "want a string"},
		{"too few chunks", doc(okID, "102400", "65536", c0), "1 chunks for size 102400, want 2"},
		{"too many chunks", doc(okID, "102400", "65536", c0+","+c1+","+c1), "3 chunks for size 102400"},
		{"size one past", doc(okID, "131073", "65536", c0+","+c1), "want 3"},
		{"size zero with chunks", doc(okID, "0", "65536", c0), "want 0"},
		{"bad chunk id", doc(okID, "102400", "65536", c0+`,"b3:xyz"`), "chunks[1]"},
		{"chunk id uppercase", doc(okID, "102400", "65536", c0+","+strings.ToUpper(c1)), "not a canonical id"},
		{"chunk null", doc(okID, "102400", "65536", c0+",null"), "got null"},
		{"chunk number", doc(okID, "102400", "65536", c0+",7"), "got a number"},
		{"chunk nested", doc(okID, "102400", "65536", c0+",["+c1+"]"), "got an array"},
		{"negative size", doc(okID, "-1", "65536", ""), "-1 < 0"},
		{"fraction size", doc(okID, "102400.0", "65536", c0+","+c1), "digits only"},
		{"exponent size", doc(okID, "1.024e5", "65536", c0+","+c1), "digits only"},
		{"huge size", doc(okID, "9007199254740992", "65536", ""), "exceeds 2^53-1"},
		{"size overflow", doc(okID, "99999999999999999999", "65536", ""), "exceeds 2^53-1"},
		{"size string", doc(okID, `"102400"`, "65536", c0+","+c1), "want an integer"},
		{"chunk_size 32 KiB", doc(okID, "102400", "32768", c0+","+c1), "chunk_size 32768"},
		{"chunk_size 1 MiB", doc(okID, "102400", "1048576", c0+","+c1), "chunk_size 1048576"},
		{"chunk_size float", doc(okID, "102400", "65536.0", c0+","+c1), "digits only"},
		{"chunk_size zero", doc(okID, "102400", "0", c0+","+c1), "chunk_size 0"},
		{"chunks object", `{"id":` + okID + `,"size":0,"chunk_size":65536,"chunks":{}}`, "want an array"},
		{"chunks null", `{"id":` + okID + `,"size":0,"chunk_size":65536,"chunks":null}`, "want an array"},
		{"unknown field", `{"id":` + okID + `,"size":102400,"chunk_size":65536,"chunks":[` + c0 + `,` + c1 + `],"x":1}`, `unknown field "x"`},
		{"unknown field first", `{"ID":` + okID + `,"size":0,"chunk_size":65536,"chunks":[]}`, `unknown field "ID"`},
		{"duplicate id", `{"id":` + okID + `,"id":` + okID + `,"size":102400,"chunk_size":65536,"chunks":[` + c0 + `,` + c1 + `]}`, `duplicate key "id"`},
		{"duplicate chunks", `{"id":` + okID + `,"size":102400,"chunk_size":65536,"chunks":[` + c0 + `],"chunks":[` + c0 + `,` + c1 + `]}`, `duplicate key "chunks"`},
		{"duplicate via escape", `{"id":` + okID + `,"size":1,"\u0073ize":102400,"chunk_size":65536,"chunks":[` + c0 + `,` + c1 + `]}`, `duplicate key "size"`},
		{"missing id", `{"size":0,"chunk_size":65536,"chunks":[]}`, "id: missing"},
		{"missing size", `{"id":` + okID + `,"chunk_size":65536,"chunks":[]}`, "size: missing"},
		{"missing chunk_size", `{"id":` + okID + `,"size":0,"chunks":[]}`, "chunk_size: missing"},
		{"missing chunks", `{"id":` + okID + `,"size":0,"chunk_size":65536}`, "chunks: missing"},
		{"trailing data", vecList + `{}`, "trailing data"},
		{"trailing garbage", vecList + ` x`, "trailing data"},
		{"two documents", vecList + "\n" + vecList, "trailing data"},
		{"truncated", vecList[:len(vecList)-1], "unexpected end"},
		{"empty input", ``, "unexpected end"},
		{"array top level", `[` + vecList + `]`, "want an object"},
		{"null top level", `null`, "want an object"},
		{"string top level", `"x"`, "want an object"},
		{"missing colon", `{"id" ` + okID + `}`, "bad JSON"},
		{"trailing comma", `{"id":` + okID + `,}`, "bad JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verified.ParseList([]byte(tc.in), want)
			if !errors.Is(err, verified.ErrBadList) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want ErrBadList containing %q", err, tc.msg)
			}
		})
	}
}

func TestParseListTooLong(t *testing.T) {
	b := make([]byte, verified.MaxListBytes+1)
	if _, err := verified.ParseList(b, store.ID{}); !errors.Is(err, verified.ErrBadList) || !strings.Contains(err.Error(), "exceed") {
		t.Fatalf("err = %v", err)
	}
}

func TestChunkRange(t *testing.T) {
	l := verified.ListOf(make([]byte, 3*store.ChunkSize+10)) // chunks 0..3, the last 10 bytes
	const cs = store.ChunkSize
	for _, tc := range []struct {
		start, end  int64
		first, last int
		header      string
	}{
		{0, 0, 0, 0, "bytes=0-65535"},
		{0, cs - 1, 0, 0, "bytes=0-65535"},
		{cs - 1, cs, 0, 1, "bytes=0-131071"},
		{cs, cs, 1, 1, "bytes=65536-131071"},
		{cs + 5, 2*cs - 1, 1, 1, "bytes=65536-131071"},
		{2 * cs, 3*cs + 9, 2, 3, "bytes=131072-196617"},
		{3*cs + 9, 3*cs + 9, 3, 3, "bytes=196608-196617"},
		{0, 3*cs + 9, 0, 3, "bytes=0-196617"},
		// Out of bounds: empty.
		{-1, 5, 0, -1, ""},
		{5, 4, 0, -1, ""},
		{0, 3*cs + 10, 0, -1, ""},
	} {
		first, last := l.ChunkRange(tc.start, tc.end)
		if first != tc.first || last != tc.last {
			t.Errorf("ChunkRange(%d, %d) = %d, %d; want %d, %d", tc.start, tc.end, first, last, tc.first, tc.last)
		}
		if got := l.RangeHeader(first, last); got != tc.header {
			t.Errorf("RangeHeader(%d, %d) = %q, want %q", first, last, got, tc.header)
		}
	}
	if !l.Covers(0, 3) || l.Covers(0, 2) || l.Covers(1, 3) {
		t.Fatal("Covers")
	}
	if off, n := l.Span(3, 3); off != 3*cs || n != 10 {
		t.Fatalf("Span(3,3) = %d, %d", off, n)
	}
	if off, n := l.Span(2, 4); off != 0 || n != 0 {
		t.Fatalf("Span out of range = %d, %d", off, n)
	}
	empty := verified.ListOf(nil)
	if first, last := empty.ChunkRange(0, 0); first != 0 || last != -1 {
		t.Fatalf("empty ChunkRange = %d, %d", first, last)
	}
}

func TestFromFields(t *testing.T) {
	want := storetest.MustID(t, vecID)
	ok := []string{vecChunk0, vecChunk1}
	l, err := verified.FromFields(want, vecID, 102400, store.ChunkSize, ok)
	if err != nil || l.Count() != 2 || l.Chunks[1].String() != vecChunk1 {
		t.Fatalf("FromFields = %+v, %v", l, err)
	}
	for _, tc := range []struct {
		name   string
		id     string
		size   int64
		cs     int
		chunks []string
		msg    string
	}{
		{"wrong id", helloID, 102400, store.ChunkSize, ok, "want " + vecID},
		{"bad id", "b3:xyz", 102400, store.ChunkSize, ok, "not a canonical id"},
		{"negative size", vecID, -1, store.ChunkSize, nil, "size -1 < 0"},
		{"count", vecID, 102400, store.ChunkSize, ok[:1], "1 chunks for size 102400"},
		{"chunk size", vecID, 102400, 4096, ok, "chunk_size 4096"},
		{"bad chunk", vecID, 102400, store.ChunkSize, []string{vecChunk0, "B3:00"}, "chunks[1]"},
		{"huge", vecID, 1 << 60, store.ChunkSize, nil, "too large"},
	} {
		if _, err := verified.FromFields(want, tc.id, tc.size, tc.cs, tc.chunks); !errors.Is(err, verified.ErrBadList) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
}
