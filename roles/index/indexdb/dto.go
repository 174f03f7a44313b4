package indexdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// announceRecordJSON is one record of POST /providers (docs/index.md §4).
type announceRecordJSON struct {
	B3     *string `json:"b3"`
	Node   string  `json:"node"`
	Addr   string  `json:"addr"`
	TTLS   *int64  `json:"ttl_s"`
	Region string  `json:"region"`
	Type   string  `json:"type"`
}

// DecodeAnnounce decodes a POST /providers body
// {"records":[{"b3","node","addr","ttl_s"?,"region"?,"type"?}]} strictly:
// unknown fields, trailing data, a non-integer ttl_s and a malformed b3 are
// errors. A missing ttl_s becomes defaultTTL. Field values (node, addr, TTL
// range…) are checked by Announce, not here. Errors are *indexapi.InvalidError
// (indexapi.ErrInvalid) with Index -1 for the envelope, else the record's index.
func DecodeAnnounce(body []byte, defaultTTL time.Duration) ([]indexapi.Announcement, error) {
	var env struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decodeStrict(body, &env); err != nil {
		return nil, &indexapi.InvalidError{Index: -1, Field: fieldOf(err, "records"), Msg: err.Error()}
	}
	out := make([]indexapi.Announcement, 0, len(env.Records))
	for i, raw := range env.Records {
		a, field, err := decodeRecord(raw, defaultTTL)
		if err != nil {
			return nil, &indexapi.InvalidError{Index: i, Field: field, Msg: err.Error()}
		}
		out = append(out, a)
	}
	return out, nil
}

// decodeRecord decodes one record; on error it names the field.
func decodeRecord(raw []byte, defaultTTL time.Duration) (indexapi.Announcement, string, error) {
	var r announceRecordJSON
	if err := decodeStrict(raw, &r); err != nil {
		return indexapi.Announcement{}, fieldOf(err, ""), err
	}
	if r.B3 == nil {
		return indexapi.Announcement{}, "b3", errors.New("missing")
	}
	id, err := store.ParseID(*r.B3)
	if err != nil {
		return indexapi.Announcement{}, "b3", err
	}
	a := indexapi.Announcement{ID: id, Node: r.Node, Addr: r.Addr, Region: r.Region, Type: r.Type, TTL: defaultTTL}
	if r.TTLS != nil {
		if *r.TTLS < 0 || *r.TTLS > math.MaxInt64/int64(time.Second) {
			return indexapi.Announcement{}, "ttl_s", errors.New("out of range")
		}
		a.TTL = time.Duration(*r.TTLS) * time.Second
	}
	return a, "", nil
}

// decodeStrict decodes exactly one JSON value with no unknown fields and
// nothing but whitespace after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// fieldOf extracts the offending field name from a json type error, else
// returns def.
func fieldOf(err error, def string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	return def
}
