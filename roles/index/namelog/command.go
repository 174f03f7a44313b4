package namelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
)

// MaxCommandBytes bounds one encoded entry (a name is at most 253 bytes).
const MaxCommandBytes = 1024

// command is the log encoding of an indexdb.NameWrite.
type command struct {
	Op      string `json:"op"` // "set" or "delete"
	Name    string `json:"name"`
	B3      string `json:"b3,omitempty"` // set only
	If      string `json:"if,omitempty"` // "", "match", "live" or "absent"
	Version uint64 `json:"version,omitempty"`
	AtMs    int64  `json:"at_ms"`
	Keep    int    `json:"keep"`
}

// condNames maps a precondition kind to its encoding.
var condNames = map[indexapi.CondKind]string{indexapi.CondNone: "", indexapi.CondVersion: "match",
	indexapi.CondLive: "live", indexapi.CondAbsent: "absent"}

// Encode returns w as a log entry. The time is kept to the millisecond.
func Encode(w indexdb.NameWrite) ([]byte, error) {
	c := command{Op: "set", Name: w.Name, If: condNames[w.Cond.Kind()], Version: w.Cond.Version(),
		AtMs: w.At.UnixMilli(), Keep: w.Keep}
	if w.Delete {
		c.Op = "delete"
	} else {
		c.B3 = w.Target.String()
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxCommandBytes {
		return nil, fmt.Errorf("namelog: entry of %d bytes, above %d", len(b), MaxCommandBytes)
	}
	return b, nil
}

// Decode parses a log entry Encode wrote. It is strict: unknown fields, a
// missing or unknown op, a set without a valid b3, a delete with one, an
// unknown precondition or a version without "match" are errors.
func Decode(b []byte) (indexdb.NameWrite, error) {
	if len(b) > MaxCommandBytes {
		return indexdb.NameWrite{}, fmt.Errorf("namelog: entry of %d bytes, above %d", len(b), MaxCommandBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c command
	if err := dec.Decode(&c); err != nil {
		return indexdb.NameWrite{}, fmt.Errorf("namelog: entry: %w", err)
	}
	if dec.More() {
		return indexdb.NameWrite{}, fmt.Errorf("namelog: entry: data after the object")
	}
	return c.write()
}

// write checks c and builds its NameWrite.
func (c command) write() (indexdb.NameWrite, error) {
	w := indexdb.NameWrite{Name: c.Name, At: time.UnixMilli(c.AtMs).UTC(), Keep: c.Keep}
	switch c.Op {
	case "set":
		id, err := store.ParseID(c.B3)
		if err != nil {
			return indexdb.NameWrite{}, fmt.Errorf("namelog: entry: b3: %w", err)
		}
		w.Target = id
	case "delete":
		if c.B3 != "" {
			return indexdb.NameWrite{}, fmt.Errorf("namelog: entry: a delete carries no b3")
		}
		w.Delete = true
	default:
		return indexdb.NameWrite{}, fmt.Errorf("namelog: entry: op %q: want set or delete", c.Op)
	}
	cond, err := c.cond()
	w.Cond = cond
	return w, err
}

// cond rebuilds the precondition of c.
func (c command) cond() (indexapi.Cond, error) {
	if c.Version != 0 && c.If != "match" {
		return indexapi.Cond{}, fmt.Errorf("namelog: entry: version %d without if=match", c.Version)
	}
	switch c.If {
	case "":
		return indexapi.Cond{}, nil
	case "match":
		if c.Version == 0 {
			return indexapi.Cond{}, fmt.Errorf("namelog: entry: if=match needs a version")
		}
		return indexapi.IfMatch(c.Version), nil
	case "live":
		return indexapi.IfLive(), nil
	case "absent":
		return indexapi.IfAbsent(), nil
	}
	return indexapi.Cond{}, fmt.Errorf("namelog: entry: if %q: want match, live or absent", c.If)
}
