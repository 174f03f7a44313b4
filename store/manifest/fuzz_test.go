package manifest_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/ronhq/ron/store/manifest"
)

// FuzzParse checks, for any input that parses, that Encode succeeds, that
// Parse(Encode(m)) equals m, that the encoding is canonical, and that a
// canonical input is its own encoding.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		vector,
		vector + "\n",
		`{"version":1,"entries":{}}`,
		`{"entries":{},"meta":{},"version":1}`,
		`{"meta":{"k":"v","\u2028<&>":"\u0000"},"version":1,"entries":{"a/b.html":{"size":0,"id":"` + helloID + `"}}}`,
		doc(`"\ud83d\ude00/\uff61":` + ent + `,"\ue000":` + ent + `,"a b/c\/d":` + ent),
		doc(`"a":` + ent + `,"a/b":` + ent),
		doc(`"a":` + ent + `,"a":` + ent),
		entry(idKV + `,"size":1.0`),
		entry(idKV + `,"size":9007199254740991,"type":"text/plain; charset=\"utf-8\""`),
		doc(`"a\ud800":` + ent),
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := manifest.Parse(b)
		if err != nil {
			return
		}
		enc, err := manifest.Encode(m)
		if err != nil {
			t.Fatalf("Encode of a parsed manifest: %v", err)
		}
		m2, err := manifest.Parse(enc)
		if err != nil {
			t.Fatalf("Parse(Encode(m)): %v\n%q", err, enc)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("Parse(Encode(m)) != m:\n%+v\n%+v", m, m2)
		}
		if !manifest.IsCanonical(enc) {
			t.Fatalf("Encode output not canonical: %q", enc)
		}
		if manifest.IsCanonical(b) && !bytes.Equal(b, enc) {
			t.Fatalf("canonical input differs from its encoding")
		}
	})
}
