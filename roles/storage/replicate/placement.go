package replicate

import (
	"context"
	"slices"
	"sync"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

// Placement is the answer of GET /api/v1/cluster/placement/{b3}
// (docs/cluster.md §9) for id: targets are the ids of top(RF, W, id) in choice order; holders are the
// members of L (alive, or departed less than forget_after ago) that answer
// POST /inventory/has with id, self included when it holds id locally,
// sorted by id. A member that does not answer within replica_stall_timeout
// (or before ctx ends) is left out. err is the local engine's failure.
func (x *Replicator) Placement(ctx context.Context, id store.ID) (targets, holders []string, err error) {
	v := x.opt.Members.View()
	targets = placement.IDs(placement.Top(x.opt.ReplicationFactor(), placement.Writable(v), id))
	held, err := x.opt.Has(ctx, []store.ID{id})
	if err != nil {
		return nil, nil, err
	}
	if held[0] {
		holders = append(holders, v.Self)
	}
	holders = append(holders, x.remoteHolders(ctx, v, id)...)
	slices.Sort(holders)
	return targets, holders, nil
}

// placementFanout bounds the concurrent inventory checks of one lookup.
const placementFanout = 8

// remoteHolders asks every member of L but self at once (at most
// placementFanout in flight), so that a few silent members cost one
// replica_stall_timeout, not one each. The checks are scoped to the call:
// it returns only once all of them ended.
func (x *Replicator) remoteHolders(ctx context.Context, v *cluster.View, id store.ID) []string {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		out  []string
		slot = make(chan struct{}, placementFanout)
	)
	for _, m := range placement.Known(v) {
		base := m.URL(placement.Role)
		if m.ID == v.Self || base == "" {
			continue
		}
		slot <- struct{}{}
		wg.Go(func() {
			defer func() { <-slot }()
			if x.memberHolds(ctx, m.ID, base, id) {
				mu.Lock()
				out = append(out, m.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// memberHolds asks one member; a member that does not answer holds nothing.
func (x *Replicator) memberHolds(ctx context.Context, member, base string, id store.ID) bool {
	got, err := x.opt.Peers.Has(ctx, base, []store.ID{id})
	if err != nil {
		x.opt.Log.Debug().Err(err).Str("member", member).Msg("placement lookup: member did not answer")
		return false
	}
	return got[id]
}
