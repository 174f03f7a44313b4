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
	resp, err := wr.Plane.Propose(ctx, consensus.KindNames, b)
	if err != nil {
		return indexdb.Record{}, err
	}
	res, ok := resp.(Result)
	if !ok {
		return indexdb.Record{}, fmt.Errorf("namelog: the state machine answered %T", resp)
	}
	return res.Record, res.Err
}
