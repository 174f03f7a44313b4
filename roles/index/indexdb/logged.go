package indexdb

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

// NameWrite is one name write as the control plane's log carries it
// (docs/cluster.md §14): everything that could differ between servers — the
// time and the history length — is fixed in it by the leader, so every
// server that applies it reaches the same record and the same verdict.
type NameWrite struct {
	Name   string
	Delete bool     // a tombstone; Target is ignored
	Target store.ID // the new target of a set
	Cond   indexapi.Cond
	At     time.Time // UpdatedAt of the new record
	Keep   int       // versions of history kept (≥ 1)
}

// ErrApplied is ApplyLogged's answer to an entry at or below the last one
// applied: a replay after a restart, which changes nothing.
var ErrApplied = errors.New("indexdb: log entry already applied")

// keyLogApplied is the meta key of the last applied log index (8 bytes,
// big-endian).
var keyLogApplied = []byte("log_applied")

// ApplyLogged applies w, the log entry at index, as Set or Delete would,
// and records index as applied in the same transaction, so an entry is
// applied at most once however often the log is replayed. A write whose
// verdict is an error (a failed precondition, ErrNotFound, ErrDeleted,
// an invalid name) changes nothing and records nothing: replayed, it meets
// the same state and the same verdict.
func (db *DB) ApplyLogged(ctx context.Context, w NameWrite, index uint64) (Record, error) {
	if _, err := indexapi.ParseName(w.Name); err != nil {
		return Record{}, err
	}
	if w.Keep < 1 {
		return Record{}, fmt.Errorf("%w: history length %d", indexapi.ErrInvalid, w.Keep)
	}
	at := func() time.Time { return w.At.UTC().Truncate(time.Millisecond) }
	next := setNext(w.Name, w.Target, at)
	if w.Delete {
		next = deleteNext(w.Name, at)
	}
	var rec Record
	err := db.kv.Update(ctx, func(tx kv.Tx) (err error) {
		if loggedIndex(tx) >= index {
			return ErrApplied
		}
		if rec, err = casStep(tx, w.Name, w.Cond, w.Keep, next); err != nil {
			return err
		}
		return putLoggedIndex(tx, index)
	})
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

// LoggedIndex returns the last applied log index (0 before any).
func (db *DB) LoggedIndex(ctx context.Context) (uint64, error) {
	var n uint64
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		n = loggedIndex(tx)
		return nil
	})
	return n, err
}

// putLoggedIndex records index as the last applied log index in tx.
func putLoggedIndex(tx kv.Tx, index uint64) error {
	return tx.Bucket(bucketMeta).Put(keyLogApplied, binary.BigEndian.AppendUint64(nil, index))
}

// loggedIndex reads the last applied log index in tx.
func loggedIndex(tx kv.Tx) uint64 {
	if b := tx.Bucket(bucketMeta).Get(keyLogApplied); len(b) == 8 {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// snapshotLine is one line of a names snapshot: the header (Applied) or
// one key of the names or name_versions bucket.
type snapshotLine struct {
	Applied *uint64 `json:"applied,omitempty"`
	Bucket  string  `json:"b,omitempty"`
	Key     []byte  `json:"k,omitempty"`
	Value   []byte  `json:"v,omitempty"`
}

// snapshotBuckets are the buckets a names snapshot holds.
var snapshotBuckets = []string{bucketNames, bucketNameVersions}

// SnapshotNames writes the names state — every current record, the kept
// history and the last applied log index — to w as JSON lines, from one
// read transaction (writes may go on meanwhile).
func (db *DB) SnapshotNames(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		applied := loggedIndex(tx)
		if err := enc.Encode(snapshotLine{Applied: &applied}); err != nil {
			return err
		}
		for _, name := range snapshotBuckets {
			c := tx.Bucket(name).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if err := enc.Encode(snapshotLine{Bucket: name, Key: k, Value: v}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexdb: snapshot names: %w", err)
	}
	return bw.Flush()
}

// RestoreNames replaces the names state with a snapshot SnapshotNames
// wrote, in one transaction: a snapshot that does not parse changes
// nothing.
func (db *DB) RestoreNames(ctx context.Context, r io.Reader) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	var head snapshotLine
	if err := dec.Decode(&head); err != nil || head.Applied == nil {
		return fmt.Errorf("indexdb: restore names: no header (%v)", err)
	}
	err := db.kv.Update(ctx, func(tx kv.Tx) error {
		for _, name := range snapshotBuckets {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := restoreLines(tx, dec); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyLogApplied, binary.BigEndian.AppendUint64(nil, *head.Applied))
	})
	if err != nil {
		return fmt.Errorf("indexdb: restore names: %w", err)
	}
	return nil
}

// restoreLines puts every key line of dec into its bucket.
func restoreLines(tx kv.Tx, dec *json.Decoder) error {
	for {
		var l snapshotLine
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if l.Bucket != bucketNames && l.Bucket != bucketNameVersions {
			return fmt.Errorf("bucket %q is not part of a names snapshot", l.Bucket)
		}
		if err := tx.Bucket(l.Bucket).Put(l.Key, l.Value); err != nil {
			return err
		}
	}
}
