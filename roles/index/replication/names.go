package replication

import (
	"context"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime/cluster"
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
// Err), or the primary's raw answer (Relay, to hand to the client as it
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

// Write runs a name write in cluster mode (docs/cluster.md §6); the caller
// has validated w. It is applied as primary when this node is the name's
// first alive owner or the request was forwarded by another node (a
// forwarded write is never forwarded again), else forwarded to the primary
// (with corrID) whose answer is relayed.
func (n *Node) Write(ctx context.Context, w NameWrite, forwarded bool, corrID string) Outcome {
	own := n.ownership()
	primary, ok := own.Primary(ownership.NameKey(w.Name))
	switch {
	case forwarded || (ok && primary.ID == own.Self()):
		return n.primaryWrite(ctx, w, own)
	case !ok:
		return Outcome{Err: errNoOwners()}
	}
	out := n.forward(ctx, primary, w, corrID)
	n.local.InvalidateName(w.Name)
	return out
}

// primaryWrite applies a write as the name's primary: refuse at once when
// fewer than W_idx owners are alive, commit locally under the name's lock,
// then replicate to the other owners and succeed once W_idx copies (this
// one included) are durable, else 503 (the outcome is then unknown).
func (n *Node) primaryWrite(ctx context.Context, w NameWrite, own ownership.View) Outcome {
	need := own.WIdx()
	others := ownership.WithoutID(own.Owners(ownership.NameKey(w.Name)), own.Self())
	if len(others)+1 < need {
		n.ownerWrites(ownerName, resultFailed, 1)
		return Outcome{Err: errCopies(0, need)}
	}
	rec, err := n.commitName(ctx, w)
	n.local.NameWritten(err)
	if err != nil {
		return Outcome{Err: err}
	}
	copies := 1 + n.replicateNames(ctx, others, []indexdb.Record{rec})
	if copies < need {
		n.ownerWrites(ownerName, resultFailed, 1)
		return Outcome{Err: errCopies(copies, need)}
	}
	n.ownerWrites(ownerName, resultOK, 1)
	return Outcome{Rec: rec}
}

// commitName runs the write's local transaction under the name's lock.
func (n *Node) commitName(ctx context.Context, w NameWrite) (indexdb.Record, error) {
	unlock := n.locks.lock(w.Name)
	var (
		rec indexdb.Record
		err error
	)
	if w.Delete {
		rec, err = n.db.Delete(ctx, w.Name, w.Cond)
	} else {
		rec, err = n.db.Set(ctx, w.Name, w.Target, w.Cond)
	}
	unlock()
	if err != nil {
		return indexdb.Record{}, n.local.StoreError(err)
	}
	n.local.InvalidateName(w.Name)
	return rec, nil
}

// replicateNames sends recs to every member of to (POST /replica/names,
// concurrently, each under ownership.Peers.Post's timeout even if the
// client went away) and returns how many stored them.
func (n *Node) replicateNames(ctx context.Context, to []cluster.Member, recs []indexdb.Record) int {
	if len(to) == 0 {
		return 0
	}
	body, err := indexdb.EncodeReplicaNames(recs)
	if err != nil {
		return 0
	}
	ids, bodies := make([]string, len(to)), make([][]byte, len(to))
	for i, m := range to {
		ids[i], bodies[i] = m.ID, body
	}
	k := 0
	for _, ok := range n.fanOut(context.WithoutCancel(ctx), ids, PathReplicaNames, bodies) {
		if ok {
			k++
		}
	}
	return k
}
