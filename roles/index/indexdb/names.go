package indexdb

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

// HistoryLen is how many versions of a name (tombstones included) are kept
// in name_versions (name_history).
const HistoryLen = 10

// timeLayout is RFC 3339 UTC with millisecond precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Record is one version of a name pointer. A tombstone has Deleted set and a
// zero Target.
type Record struct {
	Name      string
	Target    store.ID
	Version   uint64
	UpdatedAt time.Time
	Deleted   bool
}

// recordJSON is the stored form (docs/index.md §3, §9):
// {"name","b3","version","updated_at","deleted"}, b3 null on tombstones.
type recordJSON struct {
	Name      string  `json:"name"`
	B3        *string `json:"b3"`
	Version   uint64  `json:"version"`
	UpdatedAt string  `json:"updated_at"`
	Deleted   bool    `json:"deleted"`
}

// MarshalJSON encodes the stored form.
func (r Record) MarshalJSON() ([]byte, error) {
	w := recordJSON{Name: r.Name, Version: r.Version, Deleted: r.Deleted,
		UpdatedAt: r.UpdatedAt.UTC().Format(timeLayout)}
	if !r.Deleted {
		s := r.Target.String()
		w.B3 = &s
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the stored form; a live record needs a valid b3.
func (r *Record) UnmarshalJSON(b []byte) error {
	var w recordJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, w.UpdatedAt)
	if err != nil {
		return err
	}
	rec := Record{Name: w.Name, Version: w.Version, UpdatedAt: t.UTC(), Deleted: w.Deleted}
	if !w.Deleted {
		if w.B3 == nil {
			return fmt.Errorf("indexdb: live record %q without b3", w.Name)
		}
		if rec.Target, err = store.ParseID(*w.B3); err != nil {
			return err
		}
	}
	*r = rec
	return nil
}

// checkCond evaluates c against the current record (nil when absent).
func checkCond(c indexapi.Cond, cur *Record) error {
	var live uint64
	if cur != nil && !cur.Deleted {
		live = cur.Version
	}
	switch k := c.Kind(); {
	case k == indexapi.CondVersion && (live == 0 || live != c.Version()),
		k == indexapi.CondLive && live == 0:
		return &PreconditionError{Current: live}
	case k == indexapi.CondAbsent && live != 0:
		return &PreconditionError{Current: live, exists: true}
	}
	return nil
}

// Get returns the current record of name. Errors: indexapi.ErrInvalid (syntax),
// ErrNotFound (never written), ErrDeleted (tombstone; the tombstone record
// is returned with it, so callers can treat it as an authoritative miss).
func (db *DB) Get(ctx context.Context, name string) (Record, error) {
	if _, err := indexapi.ParseName(name); err != nil {
		return Record{}, err
	}
	var rec Record
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		cur, err := currentRecord(tx, name)
		if err != nil || cur == nil {
			return notFoundIfNil(err)
		}
		rec = *cur
		if cur.Deleted {
			return ErrDeleted
		}
		return nil
	})
	return rec, err
}

// notFoundIfNil turns the "absent" outcome (nil error, nil record) into
// ErrNotFound and passes real errors through.
func notFoundIfNil(err error) error {
	if err != nil {
		return err
	}
	return ErrNotFound
}

// GetVersion returns version v of name. Errors: indexapi.ErrInvalid (syntax, v = 0),
// ErrNotFound (name never written or v above the current version),
// ErrPruned (trimmed from history), ErrDeleted (v is a tombstone; the
// tombstone record is returned with it).
func (db *DB) GetVersion(ctx context.Context, name string, v uint64) (Record, error) {
	if _, err := indexapi.ParseName(name); err != nil {
		return Record{}, err
	}
	if v == 0 {
		return Record{}, indexapi.Invalidf("version 0")
	}
	var rec Record
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		var err error
		rec, err = versionRecord(tx, name, v)
		return err
	})
	return rec, err
}

// versionRecord looks up name@v inside tx.
func versionRecord(tx kv.Tx, name string, v uint64) (Record, error) {
	cur, err := currentRecord(tx, name)
	if err != nil || cur == nil {
		return Record{}, notFoundIfNil(err)
	}
	if v > cur.Version {
		return Record{}, ErrNotFound
	}
	raw := tx.Bucket(bucketNameVersions).Get(versionKey(name, v))
	if raw == nil {
		return Record{}, ErrPruned
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Record{}, fmt.Errorf("indexdb: decode %s@%d: %w", name, v, err)
	}
	if rec.Deleted {
		return rec, ErrDeleted
	}
	return rec, nil
}

// History returns the kept versions of name (at most Limits().HistoryLen,
// tombstones included), newest first. A deleted name still has its history. Errors:
// indexapi.ErrInvalid, ErrNotFound (never written).
func (db *DB) History(ctx context.Context, name string) ([]Record, error) {
	if _, err := indexapi.ParseName(name); err != nil {
		return nil, err
	}
	var out []Record
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		if cur, err := currentRecord(tx, name); err != nil || cur == nil {
			return notFoundIfNil(err)
		}
		var err error
		out, err = historyRecords(tx, name)
		return err
	})
	if keep := db.Limits().HistoryLen; len(out) > keep {
		out = out[:keep] // name_history was lowered; the next write trims
	}
	return out, err
}

// historyRecords reads name_versions for name, newest first.
func historyRecords(tx kv.Tx, name string) ([]Record, error) {
	prefix := versionPrefix(name)
	var out []Record
	c := tx.Bucket(bucketNameVersions).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var rec Record
		if err := json.Unmarshal(v, &rec); err != nil {
			return nil, fmt.Errorf("indexdb: decode history of %s: %w", name, err)
		}
		out = append(out, rec)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Set points name at target if cond holds, as one compare-and-set
// transaction, and returns the new record. Every successful Set adds 1 to
// the version, even with an unchanged target, and continues after a
// tombstone. Errors: indexapi.ErrInvalid, ErrPrecondition (*PreconditionError; also
// ErrExists for indexapi.IfAbsent on a live name).
func (db *DB) Set(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (Record, error) {
	if _, err := indexapi.ParseName(name); err != nil {
		return Record{}, err
	}
	return db.write(ctx, name, cond, setNext(name, target, db.nowMs))
}

// setNext builds the record a Set of name to target writes, stamped with
// at() (called inside the write's transaction, so times follow versions).
func setNext(name string, target store.ID, at func() time.Time) func(*Record) (Record, error) {
	return func(cur *Record) (Record, error) {
		return Record{Name: name, Target: target, Version: nextVersion(cur), UpdatedAt: at()}, nil
	}
}

// Delete writes a tombstone version for name if cond holds (indexapi.IfAbsent is
// meaningless here and always fails on a live name). Errors: indexapi.ErrInvalid,
// ErrPrecondition, ErrNotFound (never written), ErrDeleted (already a
// tombstone). Preconditions are evaluated before existence, as in HTTP.
func (db *DB) Delete(ctx context.Context, name string, cond indexapi.Cond) (Record, error) {
	if _, err := indexapi.ParseName(name); err != nil {
		return Record{}, err
	}
	return db.write(ctx, name, cond, deleteNext(name, db.nowMs))
}

// deleteNext builds the tombstone a Delete of name writes, stamped with
// at() (as setNext).
func deleteNext(name string, at func() time.Time) func(*Record) (Record, error) {
	return func(cur *Record) (Record, error) {
		switch {
		case cur == nil:
			return Record{}, ErrNotFound
		case cur.Deleted:
			return Record{}, ErrDeleted
		}
		return Record{Name: name, Version: nextVersion(cur), UpdatedAt: at(), Deleted: true}, nil
	}
}

// write runs the read-check-write of Set and Delete in one Update: load the
// current record, check cond, build the next record, store it and trim the
// history.
func (db *DB) write(ctx context.Context, name string, cond indexapi.Cond, next func(*Record) (Record, error)) (Record, error) {
	var rec Record
	err := db.kv.Update(ctx, func(tx kv.Tx) (err error) {
		rec, err = casStep(tx, name, cond, db.Limits().HistoryLen, next)
		return err
	})
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

// casStep is one name write inside tx: load the current record, check
// cond, build the next record, store it and trim the history to keep
// versions.
func casStep(tx kv.Tx, name string, cond indexapi.Cond, keep int, next func(*Record) (Record, error)) (Record, error) {
	cur, err := currentRecord(tx, name)
	if err != nil {
		return Record{}, err
	}
	if err := checkCond(cond, cur); err != nil {
		return Record{}, err
	}
	rec, err := next(cur)
	if err != nil {
		return Record{}, err
	}
	return rec, putRecord(tx, rec, keep)
}

// nextVersion is the version after cur (1 for a new name).
func nextVersion(cur *Record) uint64 {
	if cur == nil {
		return 1
	}
	return cur.Version + 1
}

// currentRecord reads names[name]; nil, nil when absent.
func currentRecord(tx kv.Tx, name string) (*Record, error) {
	raw := tx.Bucket(bucketNames).Get([]byte(name))
	if raw == nil {
		return nil, nil
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("indexdb: decode %s: %w", name, err)
	}
	return &rec, nil
}

// putRecord stores rec as current and in history, then trims the history
// to keep versions.
func putRecord(tx kv.Tx, rec Record, keep int) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketNames).Put([]byte(rec.Name), raw); err != nil {
		return err
	}
	if err := tx.Bucket(bucketNameVersions).Put(versionKey(rec.Name, rec.Version), raw); err != nil {
		return err
	}
	return trimHistory(tx.Bucket(bucketNameVersions), rec.Name, keep)
}

// trimHistory deletes the oldest versions of name beyond keep.
func trimHistory(b kv.Bucket, name string, keep int) error {
	prefix := versionPrefix(name)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for len(keys) > keep {
		if err := b.Delete(keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

// versionPrefix is name + 0x00 (names never contain 0x00).
func versionPrefix(name string) []byte {
	return append([]byte(name), 0)
}

// versionKey is name + 0x00 + u64 big-endian version.
func versionKey(name string, v uint64) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(name), v)
}
