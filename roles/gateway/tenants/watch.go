package tenants

import (
	"context"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
)

// watchLoop is Run's state when it follows Client.Watch; it belongs to the
// Run goroutine.
type watchLoop struct {
	f       *Follower
	retry   *time.Timer // fires when the next Watch attempt is due
	sub     *subscription
	attempt int // failed or closed watches since the last good one
}

// subscription is one open Watch.
type subscription struct {
	ch     <-chan registryapi.Update
	cancel context.CancelFunc
}

// run is the loop of Run: HEAD at start and every headInterval, updates
// while a watch is open, reconnection with backoff while none is.
func (w *watchLoop) run(ctx context.Context) error {
	w.f.syncHead(ctx)
	head := time.NewTicker(headInterval)
	defer head.Stop()
	for {
		var updates <-chan registryapi.Update
		var due <-chan time.Time
		if w.sub != nil {
			updates = w.sub.ch
		} else {
			due = w.retry.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-head.C:
			w.f.syncHead(ctx)
		case <-due:
			w.connect(ctx)
		case u, open := <-updates:
			if !open {
				w.sub.cancel()
				w.sub = nil
				w.f.log.Warn().Msg("registry watch closed; reconnecting")
				w.backoff()
				continue
			}
			u = newestUpdate(updates, u)
			w.f.consider(ctx, u.Version, u.PayloadB3)
		}
	}
}

// connect opens a watch resuming after the last applied version, or
// schedules the next attempt when it fails.
func (w *watchLoop) connect(ctx context.Context) {
	var since *uint64
	if v, ok := w.f.last(); ok {
		since = &v
	}
	wctx, cancel := context.WithCancel(ctx)
	ch, err := w.f.client.Watch(wctx, since)
	if err != nil {
		cancel()
		if ctx.Err() == nil {
			w.f.log.Warn().Err(err).Msg("registry watch failed; retrying")
			w.backoff()
		}
		return
	}
	w.f.met.spawned.Inc()
	w.sub, w.attempt = &subscription{ch: ch, cancel: cancel}, 0
}

// backoff schedules the next Watch attempt.
func (w *watchLoop) backoff() {
	w.retry.Reset(reconnectBackoff.Delay(w.attempt, w.f.rnd))
	w.attempt++
}

// close ends an open watch (counted as cancelled) and waits, at most
// closeWait, for the client to close its channel, so that the client's
// goroutine is gone when Run returns.
func (w *watchLoop) close() {
	w.retry.Stop()
	if w.sub == nil {
		return
	}
	w.f.met.canceled.Inc()
	w.sub.cancel()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	for {
		select {
		case _, open := <-w.sub.ch:
			if !open {
				return
			}
		case <-t.C:
			w.f.log.Warn().Msg("registry watch did not close")
			return
		}
	}
}
