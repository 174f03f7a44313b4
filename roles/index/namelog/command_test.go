package namelog

import (
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

var at = time.Date(2030, 5, 6, 7, 8, 9, 123_000_000, time.UTC)

func TestCommandRoundTrip(t *testing.T) {
	target := store.Sum([]byte("t"))
	for _, w := range []indexdb.NameWrite{
		{Name: "a.example", Target: target, At: at, Keep: 10},
		{Name: "a.example", Target: target, Cond: indexapi.IfMatch(7), At: at, Keep: 1},
		{Name: "a.example", Target: target, Cond: indexapi.IfAbsent(), At: at, Keep: 3},
		{Name: "a.example", Delete: true, Cond: indexapi.IfLive(), At: at, Keep: 10},
		{Name: "a.example", Delete: true, At: at, Keep: 10},
	} {
		b, err := Encode(w)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil || got != w {
			t.Errorf("%s decoded to %+v, %v; want %+v", b, got, err, w)
		}
	}
	if _, err := Encode(indexdb.NameWrite{Name: strings.Repeat("n", 2000), At: at, Keep: 1}); err == nil {
		t.Error("an entry above MaxCommandBytes encoded")
	}
}

// TestDecodeRefusesMalformedEntries is the table of entries Decode refuses.
func TestDecodeRefusesMalformedEntries(t *testing.T) {
	b3 := store.Sum([]byte("t")).String()
	for _, bad := range []string{
		``, `null`, `[]`, `{}`, `{"op":"move","name":"a","at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","b3":"b3:zz","at_ms":1,"keep":1}`,
		`{"op":"delete","name":"a","b3":"` + b3 + `","at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","if":"maybe","at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","if":"match","at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","version":3,"at_ms":1,"keep":1}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","at_ms":1,"keep":1,"extra":true}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","at_ms":1,"keep":1} {}`,
		`{"op":"set","name":"a","b3":"` + b3 + `","at_ms":"1","keep":1}`,
		`{"op":"set","name":"` + strings.Repeat("n", 1100) + `","b3":"` + b3 + `","at_ms":1,"keep":1}`,
	} {
		if w, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%q decoded to %+v", bad, w)
		}
	}
}

// FuzzDecode: a log entry is outside input (any server may have appended
// it). Decode never panics, and what it accepts encodes back to an entry
// that decodes to the same write.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(indexdb.NameWrite{Name: "a.example", Target: store.Sum([]byte("t")), Cond: indexapi.IfMatch(2), At: at, Keep: 10})
	f.Add(good)
	f.Add([]byte(`{"op":"delete","name":"a","if":"live","at_ms":0,"keep":1}`))
	f.Add([]byte(`{"op":"set"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(w)
		if err != nil {
			return // a name Decode does not check may exceed the bound once re-encoded
		}
		back, err := Decode(again)
		if err != nil || back != w {
			t.Fatalf("%s → %+v → %s → %+v, %v", b, w, again, back, err)
		}
	})
}
