package namelog

import (
	"context"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
)

// Writer proposes name writes to the control plane: it chooses the
// record's time and the history length (the leader's choice, carried in
// the entry), appends the entry through the plane and answers what the
// state machine answered once the entry is committed and applied here.
type Writer struct {
	// Plane is the node's control-plane handle.
	Plane *consensus.Plane
	// Keep returns the history length in force (index.name_history).
	Keep func() int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Import appends recs (names held before this node joined the control
// plane) as one import entry and returns how many became current; errors
// as Write's.
func (wr Writer) Import(ctx context.Context, recs []indexdb.Record) (int, error) {
	b, err := EncodeImport(Import{Records: recs, Keep: wr.Keep()})
	if err != nil {
		return 0, err
	}
	res, err := wr.propose(ctx, b)
	return res.Imported, err
}

// propose appends entry b and returns the machine's Result: its verdict as
// the error, or the plane's.
func (wr Writer) propose(ctx context.Context, b []byte) (Result, error) {
	resp, err := wr.Plane.Propose(ctx, consensus.KindNames, b)
	if err != nil {
		return Result{}, err
	}
	res, ok := resp.(Result)
	if !ok {
		return Result{}, fmt.Errorf("namelog: the state machine answered %T", resp)
	}
	return res, res.Err
}

// Write appends w (its At and Keep are set here) and returns the record
// written or the state machine's verdict (an indexdb error). The plane's
// errors come back as they are: *consensus.NotLeaderError (forward the
// write to the leader), consensus.ErrNoQuorum (nothing was written) and
// consensus.ErrUnknownOutcome (the entry may still commit).
func (wr Writer) Write(ctx context.Context, w indexdb.NameWrite) (indexdb.Record, error) {
	now := time.Now
	if wr.Now != nil {
		now = wr.Now
	}
	w.At, w.Keep = now(), wr.Keep()
	b, err := Encode(w)
	if err != nil {
		return indexdb.Record{}, err
	}
	res, err := wr.propose(ctx, b)
	return res.Record, err
}
