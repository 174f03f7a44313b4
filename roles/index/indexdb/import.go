package indexdb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ronhq/ron/store/kv"
)

// bucketNamesImport holds the names a database held before it applied any
// control-plane log entry (docs/cluster.md §14): name → the JSON array of
// its kept records, waiting to be imported through the log.
const bucketNamesImport = "names_import"

// ParkUnlogged prepares a database for the control plane. When it has never
// applied a log entry (LoggedIndex 0) yet holds names — written by this node
// alone or by the earlier cluster scheme — it moves every name with its
// history into the import bucket in one transaction, so the replicated
// state starts empty, as the log's does, and nothing is lost. It returns
// how many names it moved (0 for a database that follows the log already).
func (db *DB) ParkUnlogged(ctx context.Context) (int, error) {
	moved := 0
	err := db.kv.Update(ctx, func(tx kv.Tx) error {
		moved = 0
		if loggedIndex(tx) != 0 {
			return nil
		}
		names := tx.Bucket(bucketNames)
		var keys [][]byte
		c := names.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := parkName(tx, string(k)); err != nil {
				return err
			}
		}
		moved = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("indexdb: park names: %w", err)
	}
	return moved, nil
}

// parkName moves name's current record and history into the import bucket,
// after what an earlier park left there for it (a node run without the
// cluster between two parks).
func parkName(tx kv.Tx, name string) error {
	recs, err := historyIn(tx, name)
	if err != nil {
		return err
	}
	cur, err := currentRecord(tx, name)
	if err != nil {
		return err
	}
	if cur != nil && !slices.ContainsFunc(recs, func(r Record) bool { return r.Version == cur.Version }) {
		recs = append(recs, *cur) // the current record is normally in the history too
	}
	if old := tx.Bucket(bucketNamesImport).Get([]byte(name)); old != nil {
		var parked []Record
		if err := json.Unmarshal(old, &parked); err != nil {
			return fmt.Errorf("decode parked %s: %w", name, err)
		}
		recs = append(parked, recs...)
	}
	raw, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketNamesImport).Put([]byte(name), raw); err != nil {
		return err
	}
	if err := tx.Bucket(bucketNames).Delete([]byte(name)); err != nil {
		return err
	}
	return trimHistory(tx.Bucket(bucketNameVersions), name, 0)
}

// historyIn returns every kept record of name in tx.
func historyIn(tx kv.Tx, name string) ([]Record, error) {
	var out []Record
	prefix := versionPrefix(name)
	c := tx.Bucket(bucketNameVersions).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var r Record
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("decode %s history: %w", name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// PendingImport returns the parked names waiting to be imported, whole
// names in name order, until at least limit records (at most
// MaxReplicaBatch) are collected: records, and the names they belong to.
func (db *DB) PendingImport(ctx context.Context, limit int) ([]Record, []string, error) {
	limit = min(max(limit, 1), MaxReplicaBatch)
	var recs []Record
	var names []string
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		recs, names = recs[:0], names[:0]
		c := tx.Bucket(bucketNamesImport).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var rs []Record
			if err := json.Unmarshal(v, &rs); err != nil {
				return fmt.Errorf("indexdb: decode parked %s: %w", k, err)
			}
			if len(recs) > 0 && len(recs)+len(rs) > limit {
				return nil
			}
			recs, names = append(recs, rs...), append(names, string(k))
		}
		return nil
	})
	return recs, names, err
}

// DropImported removes names from the import bucket once the log holds
// them.
func (db *DB) DropImported(ctx context.Context, names []string) error {
	return db.kv.Update(ctx, func(tx kv.Tx) error {
		b := tx.Bucket(bucketNamesImport)
		for _, n := range names {
			if err := b.Delete([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
}
