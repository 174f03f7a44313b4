package content

import (
	"net/http"
	"testing"

	"github.com/ronhq/ron/store"
)

func TestETagIsTheQuotedID(t *testing.T) {
	id := store.Sum([]byte("hello"))
	if got, want := ETag(id), `"`+id.String()+`"`; got != want {
		t.Fatalf("ETag = %s, want %s", got, want)
	}
}

func TestETagMatches(t *testing.T) {
	id := store.Sum([]byte("a"))
	other := store.Sum([]byte("b"))
	tag := ETag(id)
	cases := []struct {
		inm  string
		want bool
	}{
		{"", false},
		{"*", false},
		{tag, true},
		{"W/" + tag, true},
		{ETag(other), false},
		{ETag(other) + ", " + tag, true},
		{" " + tag + " ", true},
		{id.String(), false},                 // unquoted
		{`"` + id.String()[3:] + `"`, false}, // no b3: prefix
		{"w/" + tag, false},                  // W/ is case-sensitive
	}
	for _, c := range cases {
		if got := ETagMatches(c.inm, id); got != c.want {
			t.Errorf("ETagMatches(%q) = %v, want %v", c.inm, got, c.want)
		}
	}
}

func TestSetObject(t *testing.T) {
	h := http.Header{}
	SetObject(h, `"b3:x"`)
	want := map[string]string{"Etag": `"b3:x"`, "Cache-Control": Immutable, "Accept-Ranges": "bytes",
		"X-Content-Type-Options": "nosniff"}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// The shared values are never modified by a caller's Add.
	h.Add("Cache-Control", "no-transform")
	if valImmutable[0] != Immutable || len(valImmutable) != 1 {
		t.Fatalf("shared Cache-Control value changed: %q", valImmutable)
	}
}
