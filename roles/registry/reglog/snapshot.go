package reglog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/store/kv"
)

// snapshotVersion is the first line's "v".
const snapshotVersion = 1

// maxSnapshotLine bounds one line of a snapshot read back (a record in
// JSON, base64 artifact included, or the header with every proposal).
const maxSnapshotLine = 1 << 30

// header is a snapshot's first line: registry.db's replicated part.
type header struct {
	V         int               `json:"v"`
	Applied   uint64            `json:"applied"`
	Origin    string            `json:"origin,omitempty"`
	Key       string            `json:"key,omitempty"`
	Head      json.RawMessage   `json:"head,omitempty"`
	Retired   json.RawMessage   `json:"retired,omitempty"`
	Proposals []json.RawMessage `json:"proposals"`
	// From is the first record that follows (the leader's min_index);
	// Records how many follow, one JSON line each.
	From    uint64 `json:"from"`
	Records uint64 `json:"records"`
}

// Snapshot implements raft.FSM. Raft calls it between applies: registry.db's
// replicated part (HEAD, retired signers, origin, log_applied and every
// proposal, from one read transaction), the log key's text and every
// segment record from min_index are copied into memory here (records are
// immutable, but retention may prune them before Persist runs), so the
// snapshot is the state after exactly the last applied entry. A registry
// of many versions makes a large snapshot: every record from min_index is
// in it.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	h := header{V: snapshotVersion, Proposals: []json.RawMessage{}}
	err := f.opt.DB.View(ctx, func(tx kv.Tx) error {
		if meta := tx.Bucket(committer.BucketMeta); meta != nil {
			if raw := meta.Get([]byte(committer.KeyLogApplied)); len(raw) == 8 {
				h.Applied = binary.BigEndian.Uint64(raw)
			}
			h.Origin = string(meta.Get([]byte(committer.KeyOrigin)))
			h.Head = bytes.Clone(meta.Get([]byte(committer.KeyHead)))
			h.Retired = bytes.Clone(meta.Get([]byte(committer.KeyRetiredSigners)))
		}
		if props := tx.Bucket(committer.BucketProposals); props != nil {
			cur := props.Cursor()
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				h.Proposals = append(h.Proposals, bytes.Clone(v))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reglog: snapshot: %w", err)
	}
	if f.opt.Key != nil && h.Applied > 0 { // the log's key, once an init entry installed it
		h.Key = f.opt.Key()
	}
	log := f.opt.Log
	h.From = log.MinIndex()
	var buf bytes.Buffer
	var recs bytes.Buffer
	if next := log.Next(); next > h.From {
		err = log.Scan(h.From, next-1, func(r segment.Record) error {
			h.Records++
			return writeLine(&recs, r)
		})
		if err != nil {
			return nil, fmt.Errorf("reglog: snapshot records: %w", err)
		}
	}
	if err := writeLine(&buf, h); err != nil {
		return nil, err
	}
	buf.Write(recs.Bytes())
	return consensus.BytesSnapshot(buf.Bytes()), nil
}

// writeLine writes v's JSON and a newline.
func writeLine(w *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("reglog: snapshot: %w", err)
	}
	w.Write(b)
	w.WriteByte('\n')
	return nil
}

// Restore implements raft.FSM: the member's registry becomes the
// snapshot's. The snapshot is read whole and checked before anything
// changes. A member whose stores already hold the snapshot's state or a
// later one (its log_applied at or above the snapshot's; Raft restores the
// newest snapshot at every start) keeps them: the entries after the
// snapshot are replayed and skipped up to its log_applied. Otherwise the
// key is installed, the records its log lacks are appended (its log must
// reach the snapshot's first record: a member whose log ends below the
// leader's min_index cannot be rebuilt from a snapshot) and registry.db's
// replicated part is replaced in one transaction. An empty stream (the
// snapshot holds no registry: it was taken by a member that does not run
// it) changes nothing on an empty member and is refused on one that holds
// a registry.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	h, recs, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	applied, have, err := LogApplied(ctx, f.opt.DB)
	if err != nil {
		return err
	}
	if h == nil {
		if have || f.opt.Log.Next() > 0 {
			return errors.New("reglog: restore: the snapshot holds no registry but this member does; every server must run the registry when any member does (docs/cluster.md §14)")
		}
		return nil
	}
	if have && applied >= h.Applied && f.opt.Log.Next() >= h.From+h.Records {
		return nil
	}
	if err := f.restore(ctx, h, recs); err != nil {
		return err
	}
	if f.opt.Applied != nil {
		f.opt.Applied(Notice{Index: h.Applied, Restored: true})
	}
	return nil
}

// restore installs h and recs (see Restore).
func (f *FSM) restore(ctx context.Context, h *header, recs []segment.Record) error {
	if h.Key != "" && f.opt.InstallKey != nil {
		if err := f.opt.InstallKey(h.Key); err != nil {
			return fmt.Errorf("reglog: restore: %w", err)
		}
	}
	if next := f.opt.Log.Next(); len(recs) > 0 && next < h.From {
		return fmt.Errorf("reglog: restore: this member's log ends before version %d, the snapshot starts at %d (the leader pruned below it): rebuild this member from a copy of a member's registry directory", next, h.From)
	}
	if err := appendMissing(f.opt.Log, recs); err != nil {
		return fmt.Errorf("reglog: restore: %w", err)
	}
	return f.opt.DB.Update(ctx, func(tx kv.Tx) error {
		if tx.Bucket(committer.BucketProposals) != nil {
			if err := tx.DeleteBucket(committer.BucketProposals); err != nil {
				return err
			}
		}
		props, err := tx.CreateBucket(committer.BucketProposals)
		if err != nil {
			return err
		}
		for _, raw := range h.Proposals {
			var id struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(raw, &id); err != nil || id.ID == "" {
				return fmt.Errorf("reglog: restore: a proposal without an id")
			}
			if err := props.Put([]byte(id.ID), raw); err != nil {
				return err
			}
		}
		meta, err := tx.CreateBucket(committer.BucketMeta)
		if err != nil {
			return err
		}
		if h.Origin != "" {
			if err := putOrigin(meta, h.Origin); err != nil {
				return err
			}
		}
		for key, val := range map[string][]byte{committer.KeyHead: h.Head, committer.KeyRetiredSigners: h.Retired} {
			if len(val) == 0 {
				err = meta.Delete([]byte(key))
			} else {
				err = meta.Put([]byte(key), val)
			}
			if err != nil {
				return err
			}
		}
		return meta.Put([]byte(committer.KeyLogApplied), binary.BigEndian.AppendUint64(nil, h.Applied))
	})
}

// readSnapshot reads a whole snapshot: nil header for an empty stream.
func readSnapshot(r io.Reader) (*header, []segment.Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxSnapshotLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, nil, fmt.Errorf("reglog: restore: %w", err)
		}
		return nil, nil, nil
	}
	var h header
	if err := strictJSON(sc.Bytes(), &h); err != nil || h.V != snapshotVersion {
		return nil, nil, fmt.Errorf("reglog: restore: bad header (%v)", err)
	}
	recs := make([]segment.Record, 0, min(h.Records, 1<<16))
	for sc.Scan() {
		var rec segment.Record
		if err := strictJSON(sc.Bytes(), &rec); err != nil {
			return nil, nil, fmt.Errorf("reglog: restore: record line %d: %w", len(recs)+1, err)
		}
		if want := h.From + uint64(len(recs)); rec.Version != want {
			return nil, nil, fmt.Errorf("reglog: restore: record of version %d, want %d", rec.Version, want)
		}
		if err := committer.CheckRecord(rec.Version, rec.Artifact); err != nil {
			return nil, nil, fmt.Errorf("reglog: restore: %w", err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reglog: restore: %w", err)
	}
	if uint64(len(recs)) != h.Records {
		return nil, nil, fmt.Errorf("reglog: restore: %d records, the header says %d", len(recs), h.Records)
	}
	return &h, recs, nil
}

// strictJSON decodes b into v, refusing unknown members.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
