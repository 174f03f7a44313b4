package replication

import (
	"context"
	"errors"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/store"
)

// NameWrite is one PUT (Target set) or DELETE (Delete) of a name under
// Cond.
type NameWrite struct {
	Name   string
	Target store.ID
	Delete bool
	Cond   indexapi.Cond
}

// Outcome is the result of a cluster name write: this node's own (Rec or
// Err), or the leader's raw answer (Relay, to hand to the client as it
// is).
type Outcome struct {
	Rec   indexdb.Record
	Err   error
	Relay *Relayed
}

// Result returns the written record or the error, decoding a relayed
// answer.
func (o Outcome) Result() (indexdb.Record, error) {
	if o.Relay != nil {
		return o.Relay.result()
	}
	return o.Rec, o.Err
}

// Write runs a name write in cluster mode (docs/cluster.md §14); the caller
// has validated w. The write becomes an entry of the control-plane log and
// is acknowledged once it is committed on a majority and applied here. A
// node that is not the leader forwards it to the leader (with corrID) and
// relays the answer; when the leader cannot be reached at all (nothing was
// sent), it waits for the group to elect another leader and goes there
// once. A forwarded write that meets a node that is not the leader
// (leadership moved meanwhile) is not forwarded again but refused with 503
// no_quorum, as is every write while no leader is known.
func (n *Node) Write(ctx context.Context, w NameWrite, forwarded bool, corrID string) Outcome {
	for tries := 0; ; tries++ {
		rec, err := n.names.Write(ctx, indexdb.NameWrite{Name: w.Name, Delete: w.Delete, Target: w.Target, Cond: w.Cond})
		var nl *consensus.NotLeaderError
		if !errors.As(err, &nl) || forwarded {
			if err != nil {
				err = n.LogError(err)
			}
			n.local.NameWritten(err)
			return Outcome{Rec: rec, Err: err}
		}
		out, sent := n.forward(ctx, nl.LeaderID, w, corrID)
		n.local.InvalidateName(w.Name)
		if sent || tries > 0 {
			return out
		}
		if _, ok := n.names.Plane.AwaitOtherLeader(ctx, nl.LeaderID); !ok {
			return out
		}
	}
}

// LogError maps an error of a log write or barrier onto the envelope: the
// plane's refusals are 503 no_quorum (with why, and details.outcome), the
// state machine's verdicts go through Local.StoreError.
func (n *Node) LogError(err error) error {
	var nl *consensus.NotLeaderError
	switch {
	case errors.As(err, &nl):
		return httpx.NoQuorum(httpx.OutcomeNotWritten, nl.LeaderID,
			"leadership moved while the write was forwarded; nothing was written, retry")
	case errors.Is(err, consensus.ErrNoQuorum):
		return httpx.NoQuorum(httpx.OutcomeNotWritten, "", "%s", n.names.Plane.NoQuorumReason())
	case errors.Is(err, consensus.ErrUnknownOutcome), errors.Is(err, consensus.ErrClosed):
		return httpx.NoQuorum(httpx.OutcomeUnknown, "",
			"the write's outcome is unknown (leadership was lost before it was seen committed); retry with If-Match")
	}
	return n.local.StoreError(err)
}
