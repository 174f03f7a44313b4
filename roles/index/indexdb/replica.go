package indexdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

// MaxReplicaBatch is the most name records one import entry (one POST
// /replica/names, docs/cluster.md §14) carries.
const MaxReplicaBatch = 1000

// Supersedes reports whether a replaces b as the record of one name and
// version slot (docs/cluster.md §14): a higher version wins; at equal versions
// the later UpdatedAt wins, then the greater target, a tombstone (no
// target) being the smallest. It is a strict total order on records of one
// name, so nodes that apply the same records in any order keep the same
// one. Equal records supersede neither way.
func Supersedes(a, b Record) bool {
	if a.Version != b.Version {
		return a.Version > b.Version
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return compareTarget(a, b) > 0
}

// compareTarget orders the targets of two records, tombstones first.
func compareTarget(a, b Record) int {
	switch {
	case a.Deleted && b.Deleted:
		return 0
	case a.Deleted:
		return -1
	case b.Deleted:
		return 1
	}
	return bytes.Compare(a.Target[:], b.Target[:])
}

// CheckReplica validates a replica batch: 1–MaxReplicaBatch records, each
// with a valid name, a version ≥ 1 and an updated_at; a tombstone carries
// no target. Errors are *indexapi.InvalidError naming the record and field.
func CheckReplica(recs []Record) error {
	if len(recs) == 0 || len(recs) > MaxReplicaBatch {
		return &indexapi.InvalidError{Index: -1, Field: "records",
			Msg: fmt.Sprintf("want 1–%d records, got %d", MaxReplicaBatch, len(recs))}
	}
	for i, r := range recs {
		field, msg := checkReplicaRecord(r)
		if field != "" {
			return &indexapi.InvalidError{Index: i, Field: field, Msg: msg}
		}
	}
	return nil
}

// checkReplicaRecord returns the first bad field of r and why.
func checkReplicaRecord(r Record) (field, msg string) {
	if _, err := indexapi.ParseName(r.Name); err != nil {
		return "name", indexapi.InvalidMessage(err)
	}
	switch {
	case r.Version == 0:
		return "version", "must be at least 1"
	case r.UpdatedAt.IsZero():
		return "updated_at", "missing"
	case r.Deleted && r.Target != (store.ID{}):
		return "b3", "a tombstone has no target"
	}
	return "", ""
}

// ApplyImport applies recs, the names-import log entry at index
// (docs/cluster.md §14: names a node held before it joined the control
// plane), in one transaction after CheckReplica, and records index as
// applied in the same transaction (ErrApplied at or below the last one).
// Each record is added to its name's history unless the history already
// holds a record at its version that it does not supersede (the history is
// then trimmed to keep versions, the leader's choice), and becomes the
// current record when it supersedes the current one (or there is none):
// servers that apply the same entries in log order hold the same names,
// and a name both imported and written through the log keeps every
// version. It returns how many records became current. Times are kept at
// millisecond precision.
func (db *DB) ApplyImport(ctx context.Context, recs []Record, keep int, index uint64) (int, error) {
	if err := CheckReplica(recs); err != nil {
		return 0, err
	}
	if keep < 1 {
		return 0, fmt.Errorf("%w: history length %d", indexapi.ErrInvalid, keep)
	}
	current := 0
	err := db.kv.Update(ctx, func(tx kv.Tx) error {
		if loggedIndex(tx) >= index {
			return ErrApplied
		}
		current = 0
		for _, r := range recs {
			r.UpdatedAt = r.UpdatedAt.UTC().Truncate(time.Millisecond)
			became, err := applyReplica(tx, r, keep)
			if err != nil {
				return err
			}
			if became {
				current++
			}
		}
		return putLoggedIndex(tx, index)
	})
	if err != nil {
		return 0, err
	}
	return current, nil
}

// applyReplica applies one record inside tx and reports whether it became
// current.
func applyReplica(tx kv.Tx, r Record, keep int) (bool, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	if err := putHistory(tx, r, raw, keep); err != nil {
		return false, err
	}
	cur, err := currentRecord(tx, r.Name)
	if err != nil {
		return false, err
	}
	if cur != nil && !Supersedes(r, *cur) {
		return false, nil
	}
	return true, tx.Bucket(bucketNames).Put([]byte(r.Name), raw)
}

// putHistory stores r (encoded as raw) at its version unless a record there
// is not superseded by it, then trims the name's history to keep.
func putHistory(tx kv.Tx, r Record, raw []byte, keep int) error {
	b := tx.Bucket(bucketNameVersions)
	key := versionKey(r.Name, r.Version)
	if old := b.Get(key); old != nil {
		var have Record
		if err := json.Unmarshal(old, &have); err != nil {
			return fmt.Errorf("indexdb: decode %s@%d: %w", r.Name, r.Version, err)
		}
		if !Supersedes(r, have) {
			return nil
		}
	}
	if err := b.Put(key, raw); err != nil {
		return err
	}
	return trimHistory(b, r.Name, keep)
}

// replicaRecordJSON is one record of POST /replica/names:
// {name, version, b3|null, deleted, updated_at}.
type replicaRecordJSON struct {
	Name      *string `json:"name"`
	Version   *uint64 `json:"version"`
	B3        *string `json:"b3"`
	Deleted   bool    `json:"deleted"`
	UpdatedAt *string `json:"updated_at"`
}

// EncodeReplicaNames is the POST /replica/names body for recs:
// {"records":[{"name","b3","version","updated_at","deleted"}]} with b3
// null on tombstones.
func EncodeReplicaNames(recs []Record) ([]byte, error) {
	return json.Marshal(struct {
		Records []Record `json:"records"`
	}{recs})
}

// DecodeReplicaNames decodes a POST /replica/names body strictly (unknown
// fields and trailing data are errors) and checks it with CheckReplica. A
// live record needs a b3; a tombstone's b3 is null or absent. Errors are
// *indexapi.InvalidError (Index -1 for the envelope).
func DecodeReplicaNames(body []byte) ([]Record, error) {
	var env struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decodeStrict(body, &env); err != nil {
		return nil, &indexapi.InvalidError{Index: -1, Field: fieldOf(err, "records"), Msg: err.Error()}
	}
	out := make([]Record, 0, len(env.Records))
	for i, raw := range env.Records {
		r, field, err := decodeReplicaRecord(raw)
		if err != nil {
			return nil, &indexapi.InvalidError{Index: i, Field: field, Msg: err.Error()}
		}
		out = append(out, r)
	}
	return out, CheckReplica(out)
}

// decodeReplicaRecord decodes one replica record; on error it names the
// field.
func decodeReplicaRecord(raw []byte) (Record, string, error) {
	var w replicaRecordJSON
	if err := decodeStrict(raw, &w); err != nil {
		return Record{}, fieldOf(err, ""), err
	}
	switch {
	case w.Name == nil:
		return Record{}, "name", errors.New("missing")
	case w.Version == nil:
		return Record{}, "version", errors.New("missing")
	case w.UpdatedAt == nil:
		return Record{}, "updated_at", errors.New("missing")
	}
	t, err := time.Parse(time.RFC3339Nano, *w.UpdatedAt)
	if err != nil {
		return Record{}, "updated_at", errors.New("want an RFC 3339 time")
	}
	r := Record{Name: *w.Name, Version: *w.Version, Deleted: w.Deleted, UpdatedAt: t.UTC().Truncate(time.Millisecond)}
	switch {
	case w.Deleted && w.B3 != nil:
		return Record{}, "b3", errors.New("a tombstone has no target")
	case !w.Deleted && w.B3 == nil:
		return Record{}, "b3", errors.New("missing")
	case !w.Deleted:
		if r.Target, err = store.ParseID(*w.B3); err != nil {
			return Record{}, "b3", err
		}
	}
	return r, "", nil
}

// ValidateAnnounce checks a provider batch exactly as Announce does (size,
// every record) without applying it: a cluster node validates a whole
// batch before it sends parts of it to the owners (docs/cluster.md §6).
func (db *DB) ValidateAnnounce(recs []indexapi.Announcement) error { return db.validateBatch(recs) }
