package reglog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// MaxEntryBytes bounds one encoded entry: a batch of up to 257 messages
// carries at most 257 records and proposals of under 64 KiB each, in
// base64.
const MaxEntryBytes = 64 << 20

// Entry ops.
const (
	opEffects = "effects"
	opInit    = "init"
)

// Entry is one decoded registry entry: the effects of one batch, or (Init
// set) the log's creation.
type Entry struct {
	Effects committer.Effects
	// Init is set on the first entry of a replicated registry.
	Init *Init
}

// Init creates the replicated log: its origin and the note-signer key
// ("PRIVATE+KEY+…", the text of registry-log.key) every member signs
// checkpoints with. The entry's Effects are the initial state (genesis, or
// nothing when a chain held before the control plane follows in effects
// entries).
type Init struct {
	Origin string
	Key    string
}

// wire is the JSON form of an entry.
type wire struct {
	Op      string             `json:"op"`
	Origin  string             `json:"origin,omitempty"`
	Key     string             `json:"key,omitempty"`
	Effects *committer.Effects `json:"effects"`
}

// Encode returns e as a log entry (without the machine's kind byte).
func Encode(e Entry) ([]byte, error) {
	w := wire{Op: opEffects, Effects: &e.Effects}
	if e.Init != nil {
		w.Op, w.Origin, w.Key = opInit, e.Init.Origin, e.Init.Key
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("reglog: encode: %w", err)
	}
	if len(b) > MaxEntryBytes {
		return nil, fmt.Errorf("reglog: entry of %d bytes, above %d", len(b), MaxEntryBytes)
	}
	return b, nil
}

// errMalformed marks an entry that does not decode.
var errMalformed = errors.New("reglog: malformed entry")

// Decode parses an entry Encode wrote. It is strict: the bytes must be
// exactly what Encode writes for the decoded value (so no unknown, missing
// or differently spelled member, no duplicate, no data after the object),
// the effects must pass committer.Effects.Check, and an init entry must
// carry a valid origin and a key of that name.
func Decode(b []byte) (Entry, error) {
	if len(b) > MaxEntryBytes {
		return Entry{}, fmt.Errorf("%w: %d bytes, above %d", errMalformed, len(b), MaxEntryBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		return Entry{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if w.Effects == nil {
		return Entry{}, fmt.Errorf("%w: no effects", errMalformed)
	}
	e := Entry{Effects: *w.Effects}
	switch w.Op {
	case opEffects:
		if w.Origin != "" || w.Key != "" {
			return Entry{}, fmt.Errorf("%w: an effects entry carries no origin or key", errMalformed)
		}
	case opInit:
		if err := checkInit(w.Origin, w.Key); err != nil {
			return Entry{}, fmt.Errorf("%w: %w", errMalformed, err)
		}
		e.Init = &Init{Origin: w.Origin, Key: w.Key}
	default:
		return Entry{}, fmt.Errorf("%w: op %q: want effects or init", errMalformed, w.Op)
	}
	if err := e.Effects.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	again, err := Encode(e)
	if err != nil || !bytes.Equal(again, b) {
		return Entry{}, fmt.Errorf("%w: not in canonical form", errMalformed)
	}
	return e, nil
}

// checkInit checks an init entry's origin and key: the key parses and
// names the origin.
func checkInit(origin, key string) error {
	if err := tiles.CheckOrigin(origin); err != nil {
		return err
	}
	k, err := tiles.ParseLogKey(key)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if k.Origin() != origin {
		return fmt.Errorf("the key names %q, the entry %q", k.Origin(), origin)
	}
	return nil
}
