package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// Re-provide tuning (docs/storage.md §5).
const (
	reprovideBatch = 1000
	// reprovideRate caps the inventory walk at 10 batches per second.
	reprovideRate = 10
	// reprovideBatchWork bounds one batch's List, Stat and Has calls.
	reprovideBatchWork = 30 * time.Second
	// reprovideRetry is the longest wait before a failed pass is retried.
	reprovideRetry = 10 * time.Second
	// reprovideSettle is how long after an index membership change a pass
	// starts (cluster mode): a burst of joins costs one pass, and the index
	// moves its own records after as long (docs/cluster.md §6).
	reprovideSettle = 10 * time.Second
)

// reprovider re-announces the whole local inventory so that provider
// records outlive provider_ttl: a pass starts provider_ttl/2 after the
// previous one ended (the first right away), walks the engine in batches of
// reprovideBatch at most reprovideRate batches per second and sends each
// batch straight to the sink through the announcer's retrying send. One
// batch is in flight at a time, so the pass is bounded and fresh announces,
// which have their own queue and worker, are never stuck behind it.
type reprovider struct {
	engine   store.BlobStore
	announce *announcer
	cfg      *runtime.Snapshot[Config]
	metrics  roleMetrics
	log      zerolog.Logger
	kick     chan struct{} // capacity 1: provider_ttl changed, re-plan the wait
	last     time.Duration // duration of the last complete pass; run's goroutine only
}

func newReprovider(engine store.BlobStore, a *announcer, cfg *runtime.Snapshot[Config], m roleMetrics, log zerolog.Logger) *reprovider {
	m.reprovideDuration(0)
	return &reprovider{engine: engine, announce: a, cfg: cfg, metrics: m, log: log, kick: make(chan struct{}, 1)}
}

// reload tells a waiting run loop that provider_ttl may have changed. It
// never blocks.
func (p *reprovider) reload() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// run is the "reprovide" worker: passes until ctx ends.
func (p *reprovider) run(ctx context.Context) error {
	iw := p.watchIndex()
	defer iw.cancel()
	for {
		iw.mark()
		err := p.pass(ctx)
		ended := time.Now()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			p.log.Warn().Err(err).Msg("re-provide pass failed; retrying soon")
		}
		if !p.wait(ctx, ended, err != nil, iw) {
			return nil
		}
	}
}

// wait sleeps until provider_ttl/2 (at most reprovideRetry after a failed
// pass) past ended, re-reading provider_ttl on every reload, or until
// reprovideSettle after the index members changed from those of the last
// pass's start (and are still different then). It reports false when ctx
// ended.
func (p *reprovider) wait(ctx context.Context, ended time.Time, failed bool, iw *indexWatch) bool {
	var settle *time.Timer
	var due <-chan time.Time
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	for {
		d := p.cfg.Load().ProviderTTL / 2
		if failed {
			d = min(d, reprovideRetry)
		}
		t := time.NewTimer(time.Until(ended.Add(d)))
		select {
		case <-t.C:
			return true
		case <-p.kick:
		case <-iw.changes:
			if due == nil && iw.changed() {
				settle = time.NewTimer(reprovideSettle)
				due = settle.C
			}
		case <-due:
			if iw.changed() {
				t.Stop()
				p.log.Info().Msg("index members changed: re-providing")
				return true
			}
			settle, due = nil, nil
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}

// indexWatch follows the index members through an IndexWatcher sink; with
// any other sink it never signals.
type indexWatch struct {
	w       announcing.IndexWatcher // nil: the sink does not follow a cluster
	changes <-chan struct{}
	cancel  func()
	members string // IndexMembers at the start of the last pass
}

// watchIndex subscribes to the sink's index changes when it has any.
func (p *reprovider) watchIndex() *indexWatch {
	iw := &indexWatch{cancel: func() {}}
	if w, ok := p.announce.sink.(announcing.IndexWatcher); ok {
		iw.w = w
		iw.changes, iw.cancel = w.IndexChanges()
	}
	return iw
}

// mark records the index members a pass starts with.
func (iw *indexWatch) mark() {
	if iw.w != nil {
		iw.members = iw.w.IndexMembers()
	}
}

// changed reports whether the index members differ from the marked ones.
func (iw *indexWatch) changed() bool {
	return iw.w != nil && iw.w.IndexMembers() != iw.members
}

// pass walks the inventory once and announces every object.
func (p *reprovider) pass(ctx context.Context) error {
	p.metrics.spawned("reprovide")
	start := time.Now()
	ttl := reprovideTTL(p.cfg.Load().ProviderTTL, p.last)
	limit := rate.NewLimiter(reprovideRate, 1)
	var after *store.ID
	for {
		if err := limit.Wait(ctx); err != nil {
			return err
		}
		batch, next, err := p.collect(ctx, after, ttl)
		if err != nil {
			return err
		}
		p.send(ctx, batch)
		if next == nil {
			break
		}
		after = next
	}
	p.last = time.Since(start)
	p.metrics.reprovideDuration(p.last)
	return nil
}

// reprovideTTL is the TTL of a pass's records: min(86400 s, max(provider_ttl,
// 2 × the last pass's duration)), rounded up to whole seconds.
func reprovideTTL(providerTTL, lastPass time.Duration) time.Duration {
	ttl := max(providerTTL, 2*lastPass)
	if rem := ttl % time.Second; rem != 0 {
		ttl += time.Second - rem
	}
	return min(ttl, announcing.MaxProviderTTL)
}

// collect lists the batch after after and fills each record's Content-Type
// from Stat. next is the last listed id when the page was full, else nil.
func (p *reprovider) collect(ctx context.Context, after *store.ID, ttl time.Duration) (batch []announcing.Record, next *store.ID, err error) {
	bctx, cancel := context.WithTimeout(ctx, reprovideBatchWork)
	defer cancel()
	infos, err := p.engine.List(bctx, after, reprovideBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("list inventory: %w", err)
	}
	batch = make([]announcing.Record, 0, len(infos))
	for _, info := range infos {
		rec, ok, err := p.record(bctx, info.ID, ttl)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			batch = append(batch, rec)
		}
	}
	if len(infos) == reprovideBatch {
		next = &infos[len(infos)-1].ID
	}
	return batch, next, nil
}

// record builds id's record. An object gone or quarantined since List is
// skipped; any other Stat failure announces it without a type, as a record
// that lapses would hide an object still held here.
func (p *reprovider) record(ctx context.Context, id store.ID, ttl time.Duration) (announcing.Record, bool, error) {
	info, err := p.engine.Stat(ctx, id)
	var corrupt *store.CorruptError
	switch {
	case err == nil:
		return announcing.Record{ID: id, Type: info.ContentType, TTL: ttl}, true, nil
	case ctx.Err() != nil:
		return announcing.Record{}, false, ctx.Err()
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrQuarantined), errors.As(err, &corrupt):
		return announcing.Record{}, false, nil
	}
	p.log.Warn().Err(err).Str("b3_prefix", id.Prefix()).Msg("re-provide: stat failed; announcing without type")
	return announcing.Record{ID: id, TTL: ttl}, true, nil
}

// send delivers one batch, then withdraws again every id of it that left
// the store meanwhile: a DELETE or quarantine whose withdraw reached the
// sink before this batch must still have the last word.
func (p *reprovider) send(ctx context.Context, batch []announcing.Record) {
	if len(batch) == 0 {
		return
	}
	p.announce.send(ctx, batch)
	ids := make([]store.ID, len(batch))
	for i, r := range batch {
		ids[i] = r.ID
	}
	hctx, cancel := context.WithTimeout(ctx, reprovideBatchWork)
	defer cancel()
	held, err := p.engine.Has(hctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("re-provide: recheck after send failed")
		}
		return
	}
	for i, ok := range held {
		if !ok {
			p.announce.enqueue(announcing.Record{ID: ids[i], TTL: 0})
		}
	}
}
