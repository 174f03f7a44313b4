package live

import (
	"net/http"
	"time"

	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// forwardHead forwards a HEAD that no stored response answers (docs/edge.md §7.4): it
// is relayed and not stored, never coalesced; stale is the variant whose
// revalidation it replaces (served on failure when allowed).
func (k *call) forwardHead(d httpcache.Decision, stale *edgecache.Asset) error {
	f := newFlight("")
	defer f.leave()
	x := k.exchange(http.MethodHead, nil, f)
	if err := k.l.submit(x, "fill", x.runHead); err != nil {
		return err
	}
	if err := k.waitLeader(f); err != nil {
		return err
	}
	return k.answer(f, d, stale, false)
}

// revalidateLater queues one background revalidation of a, served stale
// within stale-while-revalidate (docs/edge.md §7.4), unless one is in flight already
// or the queue has no room. Requests for the key meanwhile join it.
func (k *call) revalidateLater(a edgecache.Asset, variants []edgecache.Asset) {
	f, leader := k.l.flights.join(flightKey(k.t.key, variants, k.r.Header))
	if !leader {
		return
	}
	f.leave() // no client waits for this answer
	x := k.exchange(http.MethodGet, &a, f)
	x.plan.deadline, x.plan.interim = time.Time{}, nil
	err := k.l.queue.Submit(fillq.Job{Kind: "revalidate", Run: x.runGet, Dropped: func(err error) {
		f.failed(droppedError(err), 0)
		k.l.flights.remove(f)
	}})
	if err != nil {
		f.publish(outcome{kind: outRetry})
		k.l.flights.remove(f)
	}
}
