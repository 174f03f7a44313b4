package node

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
)

// Allow-list timing.
const (
	// allowListHeadInterval is the safety-net re-read of the registry HEAD
	// (commits also arrive as RegistryUpdated events).
	allowListHeadInterval = 60 * time.Second
	// allowListCallTimeout bounds each Head and Get call.
	allowListCallTimeout = 10 * time.Second
)

// allowListRetry paces HEAD reads after a failure: 1 s doubling to 60 s.
var allowListRetry = runtime.Backoff{Base: time.Second, Max: allowListHeadInterval, Factor: 2, Jitter: 0.2}

// memberAllowList is the allow list of registry-approved members, on with
// cluster.registry_admission (docs/cluster.md §2): it follows the co-located
// registry's committed HEAD and offers the ids of its node items to the
// membership table through allowed. Only the goroutine running run writes;
// allowed is a lock-free read.
type memberAllowList struct {
	log     zerolog.Logger
	ids     atomic.Pointer[map[string]bool] // nil until a HEAD was read
	version atomic.Uint64                   // the applied registry version
}

func newMemberAllowList(log zerolog.Logger) *memberAllowList {
	return &memberAllowList{log: log.With().Str("component", "registry_admission").Logger()}
}

// allowed implements cluster.Options.AllowList: the node ids listed in the
// last applied HEAD, ok = false before any was read.
func (a *memberAllowList) allowed() (map[string]bool, bool) {
	p := a.ids.Load()
	if p == nil {
		return nil, false
	}
	return *p, true
}

// run follows the registry until ctx ends: HEAD at once and every 60 s
// (1 s doubling after failures), and each RegistryUpdated event of the bus.
// Failures keep the last set in force.
func (a *memberAllowList) run(ctx context.Context, client registryapi.Client, bus *runtime.Bus) {
	sub := bus.Subscribe("node/registry_admission") // the subscriber label of ron_bus_lagged_total
	defer sub.Close()
	failures := 0
	for {
		wait := allowListHeadInterval
		if err := a.syncHead(ctx, client); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn().Err(err).Msg("registry HEAD unavailable; admitted nodes unchanged")
			wait = allowListRetry.Delay(failures, nil)
			failures++
		} else {
			failures = 0
		}
		if !a.waitEvents(ctx, client, sub, wait) {
			return
		}
	}
}

// waitEvents applies RegistryUpdated events until wait has passed (true)
// or ctx ended (false).
func (a *memberAllowList) waitEvents(ctx context.Context, client registryapi.Client, sub *runtime.Subscription, wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case ev := <-sub.C():
			u, ok := ev.(runtime.RegistryUpdated)
			if !ok {
				continue
			}
			if err := a.apply(ctx, client, u.Version, u.B3); err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Uint64("version", u.Version).Msg("registry version unavailable; admitted nodes unchanged")
			}
		}
	}
}

// syncHead reads HEAD and applies it when it is new.
func (a *memberAllowList) syncHead(ctx context.Context, client registryapi.Client) error {
	cctx, cancel := context.WithTimeout(ctx, allowListCallTimeout)
	defer cancel()
	h, err := client.Head(cctx)
	if err != nil {
		return err
	}
	return a.apply(ctx, client, h.Version, h.PayloadB3)
}

// apply reads version v (announced with payload_b3 b3) and installs its node
// ids, unless a version at least as new is already applied.
func (a *memberAllowList) apply(ctx context.Context, client registryapi.Client, v uint64, b3 string) error {
	if a.ids.Load() != nil && v <= a.version.Load() {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, allowListCallTimeout)
	defer cancel()
	art, _, err := client.Get(cctx, v)
	if err != nil {
		return err
	}
	if art.PayloadB3 != b3 {
		return fmt.Errorf("version %d has payload_b3 %s, announced as %s", v, art.PayloadB3, b3)
	}
	ids, err := nodeIDs(art.Payload)
	if err != nil {
		return err
	}
	a.ids.Store(&ids)
	a.version.Store(v)
	a.log.Info().Uint64("version", v).Int("nodes", len(ids)).Msg("admitted nodes updated from the registry")
	return nil
}

// nodeIDs returns the ids of the node items of a committed payload.
func nodeIDs(payload []byte) (map[string]bool, error) {
	set, err := descriptor.ParseCommitted(payload)
	if err != nil {
		return nil, errors.Join(errors.New("registry payload unreadable"), err)
	}
	ids := make(map[string]bool, len(set.Nodes))
	for _, n := range set.Nodes {
		ids[n.ID] = true
	}
	return ids, nil
}
