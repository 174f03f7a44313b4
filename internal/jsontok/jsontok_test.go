package jsontok

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestKind(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`[{}, "s", 1, true, null]`))
	dec.UseNumber()
	want := []string{"an array", "an object", "an object", "a string", "a number", "a boolean", "null"} // value-start tokens (and the closing brace)
	for i, w := range want {
		tok, err := Next(dec)
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if got := Kind(tok); got != w {
			t.Errorf("token %d (%v): %q, want %q", i, tok, got, w)
		}
	}
}

func TestNextErrors(t *testing.T) {
	for in, want := range map[string]string{`{"a":`: "unexpected end of input", `{"a" 1}`: "bad JSON", ``: "unexpected end of input"} {
		dec := json.NewDecoder(strings.NewReader(in))
		var err error
		for err == nil {
			_, err = Next(dec)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
