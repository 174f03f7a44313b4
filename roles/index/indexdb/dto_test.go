package indexdb

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
)

func TestDecodeAnnounce(t *testing.T) {
	b3 := id("o").String()
	body := `{"records":[{"b3":"` + b3 + `","node":"n1","addr":"http://h:1","region":"eu","type":"text/plain"},` +
		`{"b3":"` + b3 + `","node":"n2","addr":"http://h:2","ttl_s":0}]}`
	got, err := DecodeAnnounce([]byte(body), DefaultTTL)
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	want0 := indexapi.Announcement{ID: id("o"), Node: "n1", Addr: "http://h:1", Region: "eu", Type: "text/plain", TTL: DefaultTTL}
	if got[0] != want0 || got[1].TTL != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestDecodeAnnounceMalformed(t *testing.T) {
	b3 := id("o").String()
	rec := func(extra string) string {
		return `{"records":[{"b3":"` + b3 + `","node":"n","addr":"http://h"` + extra + `}]}`
	}
	for _, tc := range []struct {
		body  string
		index int
		field string
	}{
		{``, -1, "records"},
		{`[]`, -1, "records"},
		{`{"records":[]} x`, -1, "records"},
		{`{"records":[],"x":1}`, -1, "records"},
		{rec(`,"ttl_s":1.5`), 0, "records.ttl_s"},
		{rec(`,"ttl_s":"5"`), 0, "records.ttl_s"},
		{rec(`,"ttl_s":99999999999999`), 0, "ttl_s"},
		{rec(`,"bogus":1`), 0, ""},
		{`{"records":[{"node":"n"}]}`, 0, "b3"},
		{`{"records":[{"b3":"` + strings.ToUpper(b3) + `"}]}`, 0, "b3"},
		{`{"records":[{"b3":7}]}`, 0, "records.b3"},
		{`{"records":[1]}`, 0, ""},
	} {
		_, err := DecodeAnnounce([]byte(tc.body), DefaultTTL)
		var ie *indexapi.InvalidError
		if !errors.As(err, &ie) || !errors.Is(err, indexapi.ErrInvalid) {
			t.Errorf("%s: err %v", tc.body, err)
			continue
		}
		if ie.Index != tc.index || (tc.field != "" && !strings.HasSuffix(ie.Field, tc.field[strings.LastIndex(tc.field, ".")+1:])) {
			t.Errorf("%s: index %d field %q, want %d %q", tc.body, ie.Index, ie.Field, tc.index, tc.field)
		}
	}
}

// FuzzDecodeAnnounce: never panics; errors are *InvalidError; accepted
// records carry sane TTLs and pass or fail Announce validation cleanly.
func FuzzDecodeAnnounce(f *testing.F) {
	b3 := id("o").String()
	f.Add(`{"records":[{"b3":"` + b3 + `","node":"n","addr":"http://h","ttl_s":5}]}`)
	f.Add(`{"records":[{"b3":"` + b3 + `","node":"n","addr":"http://u@h","region":"a b"}]}`)
	f.Add(`{"records":null}`)
	f.Fuzz(func(t *testing.T, body string) {
		recs, err := DecodeAnnounce([]byte(body), DefaultTTL)
		if err != nil {
			var ie *indexapi.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error type %T", err)
			}
			return
		}
		db := &DB{}
		db.SetLimits(Limits{})
		for _, r := range recs {
			if r.TTL < 0 || r.TTL%time.Second != 0 {
				t.Fatalf("ttl %v", r.TTL)
			}
		}
		if err := db.validateBatch(recs); err != nil && !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("validate: %v", err)
		}
	})
}
