package committer

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestGroupCommit: commits queued while the committer is busy are taken as
// one batch: one wins the version, the others fail the CAS, and the batch
// metrics show it.
func TestGroupCommit(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testGroupCommit(t, b) })
		})
	}
}

func testGroupCommit(t *testing.T, b backend) {
	const n = 8
	e := newEnv(t, b)
	defer e.close()
	sets := make([]*descriptor.Set, n)
	for i := range sets {
		sets[i] = e.next(string(rune('a' + i)))
		e.proposeApproved(sets[i])
	}
	var wg sync.WaitGroup
	hold := holdCommitter(e, &wg, e.next("held"))
	results := make([]error, n)
	won := make([]registryapi.Committed, n)
	for i, s := range sets {
		wg.Go(func() { won[i], results[i] = e.commit(s) })
	}
	synctest.Wait()
	count0 := e.metric("registry_group_commit_size_count")
	sum0 := e.metric("registry_group_commit_size_sum")
	close(hold)
	wg.Wait()

	wins := 0
	for i, err := range results {
		switch {
		case err == nil:
			wins++
			if won[i].Version != 1 || e.c.Head().PayloadB3 != sets[i].B3 {
				t.Fatalf("winner %+v head %s", won[i], e.c.Head().PayloadB3)
			}
		case httpx.AsError(err).Code != descriptor.CodeChainMismatch:
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	// the held batch was counted when taken; the n commits form one batch
	if d := e.metric("registry_group_commit_size_count") - count0; d != 1 {
		t.Fatalf("%v batches, want 1 batch of %d commits", d, n)
	}
	if d := e.metric("registry_group_commit_size_sum") - sum0; d != n {
		t.Fatalf("batched %v messages, want %d", d, n)
	}
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"registry_commits_total", []string{"result", "ok"}, 1},
		{"registry_commits_total", []string{"result", "chain_mismatch"}, n - 1},
		{"commit_cas_fail_total", nil, n - 1},
		{"registry_proposals_total", []string{"result", "stale"}, n}, // the 7 losers and "held"
		{"registry_fsync_seconds_count", []string{"file", "log"}, 1},
		{"commit_latency_seconds_count", nil, 1},
	} {
		if got := e.metric(m.name, m.labels...); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}
}
