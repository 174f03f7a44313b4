package tenants

import (
	"context"
	"errors"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
)

// Timing of docs/gateway.md §7.
const (
	// headInterval is the safety-net re-read of HEAD.
	headInterval = 60 * time.Second
	// callTimeout bounds each Head and Get call.
	callTimeout = 10 * time.Second
	// closeWait bounds Run's wait, at exit, for the client to close a
	// cancelled Watch channel.
	closeWait = 5 * time.Second
	// busSubscriber names the bus subscription (its lag counter label).
	busSubscriber = "gateway/tenants"
)

// reconnectBackoff paces Watch reconnections: 1 s doubling to 30 s, ±20 %.
var reconnectBackoff = runtime.Backoff{Base: time.Second, Max: 30 * time.Second, Factor: 2, Jitter: 0.2}

// Run follows the registry until ctx ends, then returns nil; it is the
// follower's one goroutine body (the role runs it as a named task, once).
// It reads HEAD at start and every 60 s, and takes new versions from
// Client.Watch (resuming after the last applied version; a failed or
// closed watch is reopened after 1 s, doubling to 30 s) or, with a Bus,
// from RegistryUpdated events. Version v is applied only when it is above
// the last applied one, after Get(v) succeeds and its payload_b3 equals
// the announced one; of several queued announcements only the newest is
// fetched (sets are full snapshots). Registry failures are logged and
// counted, never fatal: the last table stays in force. Without a Client,
// Run returns nil at once.
func (f *Follower) Run(ctx context.Context) error {
	switch {
	case f.client == nil:
		return nil
	case f.bus != nil:
		return f.runBus(ctx)
	}
	w := &watchLoop{f: f, retry: time.NewTimer(0)}
	defer w.close()
	return w.run(ctx)
}

// runBus follows RegistryUpdated events (co-located registry).
func (f *Follower) runBus(ctx context.Context) error {
	sub := f.bus.Subscribe(busSubscriber)
	defer sub.Close()
	f.syncHead(ctx)
	head := time.NewTicker(headInterval)
	defer head.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-head.C:
			f.syncHead(ctx)
		case ev := <-sub.C():
			if u, ok := newestEvent(sub.C(), ev); ok {
				f.consider(ctx, u.Version, u.B3)
			}
		}
	}
}

// newestEvent returns the newest RegistryUpdated among ev and the events
// already queued on c.
func newestEvent(c <-chan runtime.Event, ev runtime.Event) (runtime.RegistryUpdated, bool) {
	best, found := ev.(runtime.RegistryUpdated)
	for {
		select {
		case ev, open := <-c:
			if !open {
				return best, found
			}
			if u, ok := ev.(runtime.RegistryUpdated); ok && (!found || u.Version > best.Version) {
				best, found = u, true
			}
		default:
			return best, found
		}
	}
}

// newestUpdate returns the newest of u and the updates already queued on c.
func newestUpdate(c <-chan registryapi.Update, u registryapi.Update) registryapi.Update {
	for {
		select {
		case next, open := <-c:
			if !open {
				return u
			}
			if next.Version > u.Version {
				u = next
			}
		default:
			return u
		}
	}
}

// syncHead reads HEAD and applies it when it is new.
func (f *Follower) syncHead(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h, err := f.client.Head(cctx)
	if err != nil {
		if ctx.Err() == nil {
			f.reject(rejectFetch, 0, err, "registry head unavailable; tenant table unchanged")
		}
		return
	}
	f.consider(ctx, h.Version, h.PayloadB3)
}

// consider applies version v, announced with payload_b3 b3, when it is
// above the last applied version and checks out.
func (f *Follower) consider(ctx context.Context, v uint64, b3 string) {
	if last, ok := f.last(); ok && v <= last {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	art, _, err := f.client.Get(cctx, v)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			f.reject(rejectFetch, v, err, "registry version unavailable; tenant table unchanged")
		}
		return
	case art.PayloadB3 != b3:
		f.reject(rejectMismatch, v, errors.New("payload_b3 "+art.PayloadB3+" announced as "+b3),
			"registry version does not match its announcement; not applied")
		return
	}
	items, errs := ItemsFromSet(art.Payload)
	if items == nil && len(errs) == 1 && errors.Is(errs[0], ErrPayload) {
		f.reject(rejectPayload, v, errs[0], "registry version has no readable items; not applied")
		return
	}
	f.install(v, items, errs)
}

// reject logs and counts a version (0: unknown) that was not applied.
func (f *Follower) reject(reason string, v uint64, err error, msg string) {
	f.met.rejected[reason].Inc()
	f.log.Warn().Err(err).Str("reason", reason).Uint64("version", v).Msg(msg)
}
