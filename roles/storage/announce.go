package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/runtime"
)

// Announce tuning (docs/storage.md §5).
const (
	announceBatch    = 1000
	announceGather   = 250 * time.Millisecond
	announceDeadline = time.Second
	announceRetries  = 3
)

// announcer owns the announce queue and the one worker that drains it into
// the sink in batches.
type announcer struct {
	sink    announcing.Sink
	queue   *runtime.Queue[announcing.Record]
	metrics roleMetrics
	backoff runtime.Backoff
}

func newAnnouncer(sink announcing.Sink, m *runtime.Metrics, capacity int) *announcer {
	a := &announcer{sink: sink, metrics: roleMetrics{m}, backoff: runtime.Backoff{
		Base: 75 * time.Millisecond, Max: 2 * time.Second, Factor: 2, Jitter: 1.0 / 3}}
	if sink != nil {
		a.queue = runtime.NewQueue(m, roleName, "announce", capacity, runtime.DropOldest,
			runtime.OnDrop(func(announcing.Record) { a.metrics.announce("dropped", 1) }))
	}
	return a
}

// enabled reports whether a sink exists.
func (a *announcer) enabled() bool { return a.sink != nil }

// status is the "announce" field of the role's status details.
func (a *announcer) status(off string) string {
	if a.sink == nil {
		if off == "" {
			off = "no index configured"
		}
		return "off: " + off
	}
	if rt, ok := a.sink.(announcing.Retargeter); ok {
		return "on: " + rt.Target()
	}
	return "on"
}

// checkRetarget reports whether retarget(old, n) would succeed. With no
// sink, index_urls can only stay empty: turning announcing on needs a
// restart (the sink is built at start-up).
func (a *announcer) checkRetarget(old, n Config) error {
	if a.sink == nil {
		if len(n.IndexURLs) > 0 && len(old.IndexURLs) == 0 {
			return fmt.Errorf("storage.index_urls: announcing is off; restart to turn it on")
		}
		return nil
	}
	if rt, ok := a.sink.(announcing.Retargeter); ok {
		if err := rt.CheckRetarget(n.IndexURLs); err != nil {
			return fmt.Errorf("storage.index_urls: %w", err)
		}
	}
	return nil
}

// retarget points a Retargeter sink at cfg's index_urls and index_token.
func (a *announcer) retarget(cfg Config) error {
	if rt, ok := a.sink.(announcing.Retargeter); ok {
		if err := rt.Retarget(cfg.IndexURLs, cfg.IndexToken); err != nil {
			return fmt.Errorf("storage.index_urls: %w", err)
		}
	}
	return nil
}

// enqueue queues a record; with no sink it does nothing. A full queue drops
// its oldest record (counted as announces_total{result="dropped"}).
func (a *announcer) enqueue(r announcing.Record) {
	if a.queue == nil {
		return
	}
	if err := a.queue.Push(context.Background(), r); err != nil && !errors.Is(err, runtime.ErrClosed) {
		a.metrics.announce("dropped", 1)
	}
}

// run is the announce worker: it gathers up to announceBatch records or
// whatever announceGather collected after the first, and sends them.
func (a *announcer) run(ctx context.Context) error {
	if a.queue == nil {
		<-ctx.Done()
		return nil
	}
	for {
		first, err := a.queue.Pop(ctx)
		if err != nil {
			return nil // ctx ended or queue closed
		}
		batch := a.gather(ctx, first)
		a.send(ctx, batch)
	}
}

func (a *announcer) gather(ctx context.Context, first announcing.Record) []announcing.Record {
	batch := []announcing.Record{first}
	gctx, cancel := context.WithTimeout(ctx, announceGather)
	defer cancel()
	for len(batch) < announceBatch {
		r, err := a.queue.Pop(gctx)
		if err != nil {
			return batch
		}
		batch = append(batch, r)
	}
	return batch
}

// send delivers one batch with up to announceRetries retries.
func (a *announcer) send(ctx context.Context, batch []announcing.Record) {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, announceDeadline)
		err := a.sink.Announce(actx, batch)
		cancel()
		if err == nil {
			a.countSent(batch)
			return
		}
		if attempt >= announceRetries || ctx.Err() != nil || !transient(err) {
			a.metrics.announce("error", len(batch))
			return
		}
		a.metrics.m.Counter("backoff_retries_total", "role", roleName, "op", "announce").Inc()
		if !runtime.Sleep(ctx, a.backoff.Delay(attempt, nil)) {
			a.metrics.announce("error", len(batch))
			return
		}
	}
}

// transient reports whether a sink error may pass on retry: anything but a
// 4xx answer (429 excepted).
func transient(err error) bool {
	var he *httpx.Error
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status < 400 || he.Status >= 500
	}
	return true
}

// flush sends what is still queued, in batches, until the queue is empty or
// ctx ends (shutdown, best effort).
func (a *announcer) flush(ctx context.Context) {
	if a.queue == nil {
		return
	}
	for ctx.Err() == nil {
		var batch []announcing.Record
		for len(batch) < announceBatch {
			r, ok := a.queue.TryPop()
			if !ok {
				break
			}
			batch = append(batch, r)
		}
		if len(batch) == 0 {
			return
		}
		a.send(ctx, batch)
	}
}

func (a *announcer) countSent(batch []announcing.Record) {
	for _, r := range batch {
		if r.TTL == 0 {
			a.metrics.announce("withdrawn", 1)
		} else {
			a.metrics.announce("ok", 1)
		}
	}
}
