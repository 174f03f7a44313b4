package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// pruneSpy records the size of every Prune transaction and can fail the
// first fail calls.
type pruneSpy struct {
	db   pruner
	fail int

	mu    sync.Mutex
	sizes []int
}

func (p *pruneSpy) Prune(ctx context.Context, limit int) (int, error) {
	p.mu.Lock()
	if p.fail > 0 {
		p.fail--
		p.mu.Unlock()
		return 0, errors.New("disk hiccup")
	}
	p.mu.Unlock()
	n, err := p.db.Prune(ctx, limit)
	p.mu.Lock()
	p.sizes = append(p.sizes, n)
	p.mu.Unlock()
	return n, err
}

func (p *pruneSpy) txns() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sizes)
}

// announce stores n provider records of distinct objects with ttl.
func (b *bubbleRole) announce(n int, ttl time.Duration, tag string) {
	b.t.Helper()
	if n == 0 {
		return
	}
	recs := make([]indexapi.Announcement, n)
	for i := range recs {
		recs[i] = indexapi.Announcement{ID: store.Sum(fmt.Appendf(nil, "%s-%d", tag, i)), Node: "node-1",
			Addr: "http://10.0.0.9:5303", TTL: ttl}
	}
	if _, _, err := NewLocalClient(b.h).Announce(context.Background(), recs); err != nil {
		b.t.Fatal(err)
	}
}

// providerRecords counts the stored provider records.
func (b *bubbleRole) providerRecords() int64 {
	b.t.Helper()
	_, n, err := countRecords(context.Background(), b.kv)
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

func TestJanitorBatchesAndStopsAtFirstUnexpired(t *testing.T) {
	cases := []struct {
		expired, live, batch int
		txns                 []int
	}{
		{25, 5, 10, []int{10, 10, 5}},
		{20, 3, 10, []int{10, 10, 0}},
		{0, 4, 10, []int{0}},
		{7, 0, 1000, []int{7}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d expired, batch %d", c.expired, c.batch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubbleRole(t, nil)
				b.announce(c.expired, 10*time.Second, "old")
				b.announce(c.live, 100*time.Second, "new")
				time.Sleep(11 * time.Second)
				spy := &pruneSpy{db: b.db}
				n, err := janitor{db: spy, batch: c.batch, met: b.met}.run(t.Context())
				if err != nil || n != c.expired || !slices.Equal(spy.txns(), c.txns) {
					t.Fatalf("pruned %d (%v) in transactions %v, want %d in %v", n, err, spy.txns(), c.expired, c.txns)
				}
				if got := b.providerRecords(); got != int64(c.live) {
					t.Fatalf("%d records left, want the %d unexpired", got, c.live)
				}
				if got := b.metric(`ron_index_janitor_pruned_total{role="index"}`); got != float64(c.expired) {
					t.Fatalf("janitor_pruned_total = %v", got)
				}
			})
		})
	}
}

func TestJanitorRetriesFailedTransactions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, nil)
		b.announce(3, time.Second, "x")
		time.Sleep(2 * time.Second)
		spy := &pruneSpy{db: b.db, fail: 2}
		n, err := janitor{db: spy, batch: 10, met: b.met}.run(t.Context())
		if err != nil || n != 3 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		if got := b.metric(`ron_backoff_retries_total{role="index",op="db"}`); got != 2 {
			t.Fatalf("backoff_retries_total{op=db} = %v", got)
		}
		spy = &pruneSpy{db: b.db, fail: janitorRetries + 1}
		if _, err := (janitor{db: spy, batch: 10, met: b.met}).run(t.Context()); err == nil {
			t.Fatal("a pass failing every retry reported success")
		}
	})
}

// TestJanitorLoop runs the worker: every janitor_interval it prunes and
// refreshes the record gauges.
func TestJanitorLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, func(c *Config) { c.JanitorInterval, c.JanitorBatch = 10*time.Second, 2 })
		b.announce(5, 5*time.Second, "a")
		b.announce(1, time.Hour, "b")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.janitorLoop(ctx) }()
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		if got := b.metric(`ron_index_janitor_pruned_total{role="index"}`); got != 5 {
			t.Fatalf("pruned %v after one interval", got)
		}
		if got := b.metric(`ron_index_provider_records{role="index"}`); got != 1 {
			t.Fatalf("provider_records gauge %v", got)
		}
		if got := b.metric(`ron_tasks_spawned_total{role="index",kind="janitor"}`); got != 1 {
			t.Fatalf("janitor passes %v", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestProbeUpdatesMeta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleRole(t, nil)
		if !b.probeOK() {
			t.Fatal("first probe missing")
		}
		time.Sleep(probeFresh)
		if b.probeOK() {
			t.Fatal("a 15 s old probe still counts")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.probeLoop(ctx) }()
		time.Sleep(probeEvery)
		synctest.Wait()
		if !b.probeOK() || b.metric(`ron_tasks_spawned_total{role="index",kind="probe"}`) != 2 {
			t.Fatalf("probe loop: ok %v, %v", b.probeOK(), b.opt.Metrics.Values())
		}
		cancel()
		<-done
	})
}
