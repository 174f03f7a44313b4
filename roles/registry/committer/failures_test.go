package committer

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

var (
	busy      = want{status: http.StatusTooManyRequests, code: httpx.CodeBusy, retry: 1}
	timeout   = want{status: http.StatusServiceUnavailable, code: httpx.CodeTimeout, retry: 1}
	storageNR = want{status: http.StatusServiceUnavailable, code: httpx.CodeNotReady,
		details: map[string]any{"reason": "storage"}, retry: 5}
)

// holdCommitter parks the committer inside its registry.db update of a
// proposal of s (run by wg); closing the returned channel releases it.
func holdCommitter(e *env, wg *sync.WaitGroup, s *descriptor.Set) chan struct{} {
	hold := e.db.holdNext()
	wg.Go(func() { _, _ = e.propose(s) })
	synctest.Wait()
	return hold
}

// TestQueueFull: a full queue rejects at once with 429 busy.
func TestQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend, func(e *env) { e.qcap = 1 })
		defer e.close()
		var wg sync.WaitGroup
		hold := holdCommitter(e, &wg, e.next("held"))
		wg.Go(func() { e.mustPropose(e.next("queued")) })
		synctest.Wait()
		_, err := e.propose(e.next("rejected"))
		checkErr(t, err, busy)
		close(hold)
		wg.Wait()
		if got := e.m.Values()[`ron_busy_rejections_total{role="registry",endpoint="/registry/proposals"}`]; got != 1 {
			t.Fatalf("busy_rejections_total = %v", got)
		}
		if got := e.metric("registry_proposals_total", "result", "rejected"); got != 1 {
			t.Fatalf("rejected = %v", got)
		}
	})
}

// TestCommitTimeout: no reply within commit_timeout is 503 timeout; a
// message taken before its caller gave up still lands, a queued one whose
// ctx ended is skipped.
func TestCommitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		held, skipped := e.next("held"), e.next("skipped")
		var wg sync.WaitGroup
		hold := holdCommitter(e, &wg, held)
		start := time.Now()
		_, err := e.propose(skipped)
		checkErr(t, err, timeout)
		if d := time.Since(start); d != e.lim.CommitTimeout {
			t.Fatalf("waited %v, want %v", d, e.lim.CommitTimeout)
		}
		synctest.Wait() // the held caller has given up too
		close(hold)
		wg.Wait()
		synctest.Wait()
		if _, err := e.c.Proposal(descriptor.ProposalID(held.B3)); err != nil {
			t.Fatalf("taken message did not land: %v", err)
		}
		_, err = e.c.Proposal(descriptor.ProposalID(skipped.B3))
		checkErr(t, err, notFound)
		if got := e.metric("io_timeouts_total", "op", "commit"); got != 2 {
			t.Fatalf("io_timeouts_total = %v, want 2", got)
		}
	})
}

// TestLogFailure: an fsync error on the segment makes writes unready
// (storage) until restart and the in-flight commit gets 503; recovery then
// finds the record and a retried commit gets its 201.
func TestLogFailure(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, b)
				defer e.close()
				s := e.next("a")
				e.proposeApproved(s)
				e.fault.Inject(segment.Fault{Op: segment.OpSync, Match: "seg-", Sticky: true})
				_, err := e.commit(s)
				checkErr(t, err, storageNR)
				expectStorageUnready(t, e)
				e.restart()
				if k := e.rec.Kinds(); !slices.Contains(k, segment.KindRollForward) {
					t.Fatalf("recovery kinds %v", k)
				}
				cm := e.mustCommit(s)
				if cm.Version != 1 || e.c.Head().Version != 1 {
					t.Fatalf("after restart %+v head %d", cm, e.c.Head().Version)
				}
			})
		})
	}
}

// TestTornAppend: a torn write leaves nothing after recovery; the proposal
// is still quorum_met and commits.
func TestTornAppend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		s := e.next("a")
		e.proposeApproved(s)
		e.fault.Inject(segment.Fault{Op: segment.OpAppend, Match: "seg-", Partial: 20})
		_, err := e.commit(s)
		checkErr(t, err, storageNR)
		e.restart()
		if e.rec.Kind != segment.KindTornTail || e.c.Head().Version != 0 {
			t.Fatalf("recovery %+v head %d", e.rec, e.c.Head().Version)
		}
		if cm := e.mustCommit(s); cm.Version != 1 {
			t.Fatalf("commit %+v", cm)
		}
	})
}

// expectStorageUnready checks the sticky storage state after a failure.
func expectStorageUnready(t *testing.T, e *env) {
	t.Helper()
	if got := e.c.WriteUnready(); !slices.Equal(got, []string{ReasonStorage}) {
		t.Fatalf("write unready %v", got)
	}
	if e.c.Head().Version != 0 {
		t.Fatalf("HEAD moved to %d without durability", e.c.Head().Version)
	}
	_, err := e.propose(e.next("later"))
	checkErr(t, err, storageNR)
	if e.metric("registry_write_ready") != 0 || e.metric("registry_commits_total", "result", "error") != 1 {
		t.Fatal("metrics do not show the storage failure")
	}
}

// TestRollForward: registry.db fails after the log append; the restart
// rolls HEAD forward to the log, marks the proposal committed and the
// other open one stale, and the retried commit gets the logged 201.
func TestRollForward(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testRollForward(t, b) })
		})
	}
}

func testRollForward(t *testing.T, b backend) {
	e := newEnv(t, b)
	defer e.close()
	e.cycle("v1")
	s, other := e.next("a"), e.next("b")
	e.mustPropose(other)
	e.proposeApproved(s)
	e.db.setFail(errors.New("disk full"))
	_, err := e.commit(s)
	checkErr(t, err, storageNR)
	expectHeadAt(t, e, 1)
	e.restart()
	if e.rec.Kind != segment.KindRollForward || len(e.rec.Beyond) != 1 {
		t.Fatalf("recovery %+v", e.rec)
	}
	expectHeadAt(t, e, 2)
	if got := e.metric("registry_recoveries_total", "kind", "roll_forward"); got != 1 {
		t.Fatalf("recoveries roll_forward = %v", got)
	}
	rec := must[segment.Record](t)(e.log.Read(2))
	art := must[descriptor.Artifact](t)(descriptor.ParseArtifact(rec.Artifact))
	v := must[ProposalView](t)(e.c.Proposal(descriptor.ProposalID(s.B3)))
	if v.Status != StatusCommitted || *v.CommittedVersion != 2 || len(v.Approvals) != 2 {
		t.Fatalf("rolled proposal %+v", v)
	}
	if v := must[ProposalView](t)(e.c.Proposal(descriptor.ProposalID(other.B3))); v.Status != StatusStale {
		t.Fatalf("other proposal %+v", v)
	}
	cm := e.mustCommit(s)
	if cm.Version != 2 || cm.CommittedAt != art.CommittedAt || cm.PayloadB3 != s.B3 {
		t.Fatalf("retry %+v, log committed_at %s", cm, art.CommittedAt)
	}
	if dh := must[int64](t)(DurableHead(context.Background(), e.db)); dh != 2 {
		t.Fatalf("durable head %d after roll forward", dh)
	}
	e.cycle("v3")
}

func expectHeadAt(t *testing.T, e *env, v uint64) {
	t.Helper()
	if h := e.c.Head(); h.Version != v {
		t.Fatalf("HEAD %d, want %d", h.Version, v)
	}
}

// TestDrain: after Drain new writes get 503 draining; a message still
// queued when Run's ctx ends gets 503 draining too.
func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		var wg sync.WaitGroup
		hold := holdCommitter(e, &wg, e.next("held"))
		var queuedErr error
		wg.Go(func() { _, queuedErr = e.propose(e.next("queued")) })
		synctest.Wait()
		e.c.Drain()
		_, err := e.propose(e.next("new"))
		checkErr(t, err, draining)
		wg.Go(func() { e.g.Stop(context.Background()) })
		synctest.Wait()
		close(hold)
		wg.Wait()
		checkErr(t, queuedErr, draining)
		e.start() // e.close stops it again
	})
}

// TestPanicRestart: a panic after a batch began leaves the state
// suspect; the task group restarts Run, which reloads from the stores and
// serves on.
func TestPanicRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		var once sync.Once
		e.c.onCommit = func(registryapi.Committed) { once.Do(func() { panic("boom") }) }
		_, c1 := e.cycle("a")
		time.Sleep(time.Second) // past the restart backoff
		synctest.Wait()
		if e.g.Restarts() != 1 || e.c.poisoned.Load() {
			t.Fatalf("restarts %d poisoned %v", e.g.Restarts(), e.c.poisoned.Load())
		}
		if h := e.c.Head(); h.Version != c1.Version || h.PayloadB3 != c1.PayloadB3 {
			t.Fatalf("head after reload %d", h.Version)
		}
		if _, c2 := e.cycle("b"); c2.Version != 2 {
			t.Fatalf("commit after restart %+v", c2)
		}
	})
}

// TestOpenCapIgnoresExpired: expired proposals (swept or not) do not count
// towards max_open_proposals.
func TestOpenCapIgnoresExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		e.lim.MaxOpenProposals = 1
		e.mustPropose(e.next("a"))
		e.shiftClock(e.lim.ProposalTTL)
		e.mustPropose(e.next("b"))
		if got := e.metric("registry_proposals_total", "result", "expired"); got != 1 {
			t.Fatalf("expired = %v", got)
		}
	})
}
