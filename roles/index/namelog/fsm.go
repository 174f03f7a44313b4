package namelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
)

// applyTimeout bounds one entry's database transaction.
const applyTimeout = 10 * time.Second

// Result is what applying one entry answers (the response of the
// consensus Apply that appended it): the record written (or, for an
// import, how many records became current), or the verdict.
type Result struct {
	Record   indexdb.Record
	Imported int
	Err      error
}

// FSM applies the name log to one server's index database (raft.FSM).
type FSM struct {
	db *indexdb.DB
	// fatal is called when the database fails to store an entry (not a
	// verdict): the server must stop rather than go on with a state that
	// differs from the log; on restart the entry is applied again.
	fatal func(error)
	// failed is set once fatal was called: no later entry is applied, so
	// the applied index never passes the entry that failed.
	failed atomic.Bool
	// applied, when set, is told about every record an entry wrote (the
	// role drops its cached answers of the name).
	applied func(indexdb.Record)
}

var _ raft.FSM = (*FSM)(nil)

// NewFSM returns the state machine over db. fatal (required) is called,
// from Raft's apply goroutine, when db fails to store an entry; the caller
// stops the server.
func NewFSM(db *indexdb.DB, fatal func(error)) *FSM {
	return &FSM{db: db, fatal: fatal}
}

// OnApplied makes the FSM call f with every record an entry wrote, after
// its transaction committed, and with a zero Record after a restore
// replaced every name. Call it before the FSM is used.
func (f *FSM) OnApplied(fn func(indexdb.Record)) { f.applied = fn }

// errStopped answers every entry after a database failure.
var errStopped = errors.New("namelog: stopped after a database failure; the server restarts")

// Apply implements raft.FSM: it applies a command entry (a write, or an
// import of names held before the control plane) and answers a Result. An
// entry applied before (a replay) answers indexdb.ErrApplied; an entry that
// does not decode answers its error and changes nothing.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if f.failed.Load() {
		return Result{Err: errStopped}
	}
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	res, written := f.apply(ctx, l)
	switch {
	case res.Err == nil && f.applied != nil:
		for _, rec := range written {
			f.applied(rec)
		}
	case res.Err != nil && !verdict(res.Err):
		f.failed.Store(true)
		f.fatal(fmt.Errorf("namelog: store entry %d: %w", l.Index, res.Err))
		return Result{Err: errStopped}
	}
	return res
}

// apply decodes and applies one entry: its Result and the records it
// wrote.
func (f *FSM) apply(ctx context.Context, l *raft.Log) (Result, []indexdb.Record) {
	if isImport(l.Data) {
		imp, err := DecodeImport(l.Data)
		if err != nil {
			return Result{Err: malformed(err)}, nil
		}
		n, err := f.db.ApplyImport(ctx, imp.Records, imp.Keep, l.Index)
		return Result{Imported: n, Err: err}, imp.Records
	}
	w, err := Decode(l.Data)
	if err != nil {
		return Result{Err: malformed(err)}, nil
	}
	rec, err := f.db.ApplyLogged(ctx, w, l.Index)
	return Result{Record: rec, Err: err}, []indexdb.Record{rec}
}

// errMalformed marks an entry that does not decode: a verdict (every server
// fails to decode it alike), never a database failure.
var errMalformed = errors.New("malformed entry")

// malformed marks a decode error with errMalformed, keeping its text.
func malformed(err error) error { return fmt.Errorf("%w: %w", errMalformed, err) }

// verdict reports whether err is an answer about the write (the same on
// every server) rather than a failure of this server's database.
func verdict(err error) bool {
	var pe *indexdb.PreconditionError
	return errors.As(err, &pe) || errors.Is(err, indexapi.ErrInvalid) || errors.Is(err, errMalformed) || errors.Is(err, indexdb.ErrNotFound) ||
		errors.Is(err, indexdb.ErrDeleted) || errors.Is(err, indexdb.ErrApplied)
}

// Snapshot implements raft.FSM. Raft calls it between applies, so the
// snapshot is the state after exactly the last applied entry; the names
// are copied into memory here and written out by Persist.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	var buf bytes.Buffer
	if err := f.db.SnapshotNames(context.Background(), &buf); err != nil {
		return nil, err
	}
	return consensus.BytesSnapshot(buf.Bytes()), nil
}

// Restore implements raft.FSM: the names become the snapshot's.
func (f *FSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	if err := f.db.RestoreNames(context.Background(), r); err != nil {
		return err
	}
	if f.applied != nil {
		f.applied(indexdb.Record{})
	}
	return nil
}
