package reglog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/store/kv"
)

// applyTimeout bounds one entry's registry.db transaction.
const applyTimeout = 10 * time.Second

// Options configure an FSM. Log, DB and Fatal are required.
type Options struct {
	// Log is the member's segment log; the FSM is its only appender while
	// the registry runs on the control plane.
	Log *segment.Log
	// DB is the member's registry.db.
	DB kv.DB
	// Fatal is called, from Raft's apply goroutine, when this member's
	// stores cannot take an entry (an I/O error, a record gap, a log that
	// diverges from the entry, an init entry naming another origin or key):
	// the node must stop rather than drift from the log; on restart the
	// entry is applied again.
	Fatal func(error)
	// InstallKey installs an init entry's key text (nil: the key is not
	// kept, as in tests). It is idempotent; it replaces the member's own key
	// while that never signed a leaf, and fails otherwise.
	InstallKey func(skey string) error
	// Key returns the installed key's text for snapshots ("" when none).
	Key func() string
	// Applied, when set, is told after every entry that changed the stores
	// (after its transaction committed) and after a restore; it must not
	// block.
	Applied func(Notice)
}

// Notice tells the committer that the stores changed under it.
type Notice struct {
	Index    uint64             // the log index applied (the snapshot's on a restore)
	Token    string             // the effects' batch token ("" on a restore)
	Effects  *committer.Effects // what the entry changed; nil on a restore and for an init entry
	Restored bool               // a snapshot replaced the state
}

// Result is what applying an entry answers (the response of the consensus
// Apply that appended it). Err is a verdict (a malformed entry, the same on
// every member) or errStopped.
type Result struct {
	Replayed bool // the stores held the entry already: nothing changed
	Err      error
}

// FSM applies the registry's entries to one member's stores (raft.FSM).
type FSM struct {
	opt    Options
	failed atomic.Bool // fatal was called: nothing more is applied
}

var _ raft.FSM = (*FSM)(nil)

// NewFSM returns the state machine over opt's stores.
func NewFSM(opt Options) *FSM { return &FSM{opt: opt} }

// errInitialised is the verdict on an init entry after the first one (two
// leaders that both saw an empty log): it changes nothing, on every member
// alike.
var errInitialised = errors.New("reglog: the log is initialised already")

// errStopped answers every entry after a store failure.
var errStopped = errors.New("reglog: stopped after a store failure; the server restarts")

// Apply implements raft.FSM: it applies one entry and answers a Result. An
// entry at or below meta/log_applied is a replay and changes nothing; an
// entry that does not decode answers its error and changes nothing. Any
// store failure calls Fatal and stops applying.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if f.failed.Load() {
		return Result{Err: errStopped}
	}
	e, err := Decode(l.Data)
	if err != nil {
		return Result{Err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	replay, err := f.apply(ctx, e, l.Index)
	if errors.Is(err, errInitialised) {
		return Result{Err: err}
	}
	if err != nil {
		f.stop(fmt.Errorf("reglog: store entry %d: %w", l.Index, err))
		return Result{Err: errStopped}
	}
	if !replay && f.opt.Applied != nil {
		n := Notice{Index: l.Index, Token: e.Effects.Token}
		if e.Init == nil {
			n.Effects = &e.Effects
		}
		f.opt.Applied(n)
	}
	return Result{Replayed: replay}
}

// stop calls Fatal once.
func (f *FSM) stop(err error) {
	if !f.failed.Swap(true) {
		f.opt.Fatal(err)
	}
}

// apply stores e at index unless the stores hold it already (replay).
func (f *FSM) apply(ctx context.Context, e Entry, index uint64) (replay bool, err error) {
	applied, initialised, err := LogApplied(ctx, f.opt.DB)
	if err != nil {
		return false, err
	}
	if index <= applied {
		return true, nil
	}
	if e.Init != nil && initialised {
		return false, errInitialised
	}
	if e.Init != nil && f.opt.InstallKey != nil {
		if err := f.opt.InstallKey(e.Init.Key); err != nil {
			return false, err
		}
	}
	if err := appendMissing(f.opt.Log, e.Effects.Records); err != nil {
		return false, err
	}
	if h := e.Effects.Head; h != nil && h.Version >= f.opt.Log.Next() {
		return false, fmt.Errorf("HEAD %d is beyond the log (next %d)", h.Version, f.opt.Log.Next())
	}
	return false, f.opt.DB.Update(ctx, func(tx kv.Tx) error {
		meta, err := tx.CreateBucket(committer.BucketMeta)
		if err != nil {
			return err
		}
		if e.Init != nil { // the log's origin replaces the one this member's own key named
			if err := meta.Put([]byte(committer.KeyOrigin), []byte(e.Init.Origin)); err != nil {
				return err
			}
		}
		if err := committer.WriteEffects(tx, e.Effects); err != nil {
			return err
		}
		return meta.Put([]byte(committer.KeyLogApplied), binary.BigEndian.AppendUint64(nil, index))
	})
}

// putOrigin records origin in meta/origin, or checks it against the
// recorded one.
func putOrigin(meta kv.Bucket, origin string) error {
	stored := meta.Get([]byte(committer.KeyOrigin))
	if stored == nil {
		return meta.Put([]byte(committer.KeyOrigin), []byte(origin))
	}
	if string(stored) != origin {
		return fmt.Errorf("registry.db records origin %q, the log's is %q", stored, origin)
	}
	return nil
}

// appendMissing appends the records log does not hold yet. A record it
// holds must be byte-identical (unless pruned below min_index); a record
// beyond the log's next version is a gap.
func appendMissing(log *segment.Log, recs []segment.Record) error {
	next := log.Next()
	var missing []segment.Record
	for i, r := range recs {
		if r.Version > next {
			return fmt.Errorf("record %d leaves a gap after the log's last version (next %d)", r.Version, next)
		}
		if r.Version == next {
			missing = recs[i:]
			break
		}
		if r.Version < log.MinIndex() {
			continue // pruned here
		}
		have, err := log.Read(r.Version)
		if err != nil {
			return err
		}
		if !bytes.Equal(have.Artifact, r.Artifact) {
			return fmt.Errorf("version %d in this member's log differs from the entry's", r.Version)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return log.Append(missing)
}

// LogApplied returns meta/log_applied and whether it is set.
func LogApplied(ctx context.Context, db kv.DB) (uint64, bool, error) {
	var v uint64
	var ok bool
	err := db.View(ctx, func(tx kv.Tx) error {
		if b := tx.Bucket(committer.BucketMeta); b != nil {
			if raw := b.Get([]byte(committer.KeyLogApplied)); len(raw) == 8 {
				v, ok = binary.BigEndian.Uint64(raw), true
			}
		}
		return nil
	})
	return v, ok, err
}
