package indexsink

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/topology"
)

// target is one index URL with its client, which owns the URL's breaker.
type target struct {
	url string
	c   *indexapi.HTTPClient
}

// CheckRetarget implements announcing.Retargeter: every URL must pass
// announcing.CheckIndexURL, and without a local index or a cluster at least
// one is needed.
func (s *Sink) CheckRetarget(urls []string) error {
	for _, u := range urls {
		if err := announcing.CheckIndexURL(u); err != nil {
			return err
		}
	}
	if s.place(urls) == topology.Nowhere {
		return ErrNoTarget
	}
	return nil
}

// Retarget implements announcing.Retargeter. Clients (and breakers) of URLs
// kept are reused; those of dropped URLs are closed. Batches in flight
// finish on the targets they started with. With a local index the URLs are
// checked but not used.
func (s *Sink) Retarget(urls []string, token string) error {
	if err := s.CheckRetarget(urls); err != nil {
		return err
	}
	if s.opt.Local != nil {
		urls = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.rebuild(*s.targets.Load(), urls)
	s.static.Store(&token)
	s.targets.Store(&next)
	return nil
}

// rebuild returns the targets of urls in order, reusing old's clients (and
// breakers) for URLs kept and closing those of URLs dropped. Callers hold
// s.mu.
func (s *Sink) rebuild(old []*target, urls []string) []*target {
	next := make([]*target, 0, len(urls))
	for _, u := range urls {
		if i := slices.IndexFunc(old, func(t *target) bool { return t.url == u }); i >= 0 {
			next = append(next, old[i])
			continue
		}
		next = append(next, s.newTarget(u))
	}
	for _, t := range old {
		if !slices.Contains(next, t) {
			t.c.Close()
		}
	}
	return next
}

// place is where records go with the index URLs urls (topology.Find):
// the local index, the URLs, else in a cluster the alive index members.
func (s *Sink) place(urls []string) topology.Place {
	return topology.Find(s.opt.Local != nil, s.opt.Cluster, urls...)
}

// httpPlace is place for the HTTP targets in force.
func (s *Sink) httpPlace() ([]*target, topology.Place) {
	list := *s.targets.Load()
	urls := make([]string, len(list))
	for i, t := range list {
		urls[i] = t.url
	}
	return list, s.place(urls)
}

// httpTargets are the targets of one batch: the configured URLs, else (in
// cluster mode) the alive index members.
func (s *Sink) httpTargets() ([]*target, topology.Place) {
	list, place := s.httpPlace()
	if place == topology.Members {
		return s.memberTargets(), place
	}
	return list, place
}

// newTarget builds the HTTP client of one URL. The client does not retry:
// the sink fails over to the next URL and the announcer retries the batch.
func (s *Sink) newTarget(url string) *target {
	return &target{url: url, c: indexapi.NewHTTPClient(url, s.token, client.Options{
		Retries: -1, Role: storageapi.RoleName, Metrics: s.opt.Metrics.Set()})}
}

// announceHTTP tries the targets in order, starting with the one that last
// succeeded (while it is still a target); the first success wins. Each try gets an equal share of what
// is left of ctx's deadline. A target whose breaker is open fails at once
// without I/O and is skipped. When all fail the last real error (else the
// breaker error) is returned.
func (s *Sink) announceHTTP(ctx context.Context, recs []indexapi.Announcement) error {
	list, place := s.httpTargets()
	switch {
	case len(list) == 0 && place == topology.Members:
		return ErrNoIndexMember
	case len(list) == 0:
		return ErrNoTarget
	}
	start := max(slices.Index(list, s.last.Load()), 0)
	var lastErr error
	for i := range list {
		t := list[(start+i)%len(list)]
		err := s.try(ctx, t, recs, len(list)-i)
		if err == nil {
			s.last.Store(t)
			return nil
		}
		if lastErr == nil || !errors.Is(err, client.ErrBreakerOpen) {
			lastErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return lastErr
}

// try sends recs to t with 1/share of ctx's remaining time.
func (s *Sink) try(ctx context.Context, t *target, recs []indexapi.Announcement, share int) error {
	if dl, ok := ctx.Deadline(); ok && share > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(dl)/time.Duration(share))
		defer cancel()
	}
	_, _, err := t.c.Announce(ctx, recs)
	return err
}
