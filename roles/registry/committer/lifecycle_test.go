package committer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/store/kv"
)

// TestRotation: signer and quorum items committed at v take effect at v+1;
// a signer dropped from HEAD is revoked, one never in force unknown, also
// after a restart (retired signers are persisted).
func TestRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, boltBackend)
		defer e.close()
		s1 := e.next("rotate", 1, 2, 4) // drops 3, adds 4
		e.mustPropose(s1)
		_, err := e.approve(s1, 4)
		checkErr(t, err, invalidSig("unknown_signer")) // 4 is not in force before v2
		e.mustApprove(s1, 3)                           // 3 is still in force for v1
		e.mustApprove(s1, 1)
		e.mustCommit(s1)

		s2 := e.next("after", 1, 2, 4)
		e.mustPropose(s2)
		_, err = e.approve(s2, 3)
		checkErr(t, err, invalidSig("revoked_signer"))
		_, err = e.approve(s2, 9)
		checkErr(t, err, invalidSig("unknown_signer"))
		e.mustApprove(s2, 4)
		e.mustApprove(s2, 2)
		e.mustCommit(s2)

		e.restart()
		s3 := e.next("later", 1, 2, 4)
		e.mustPropose(s3)
		_, err = e.approve(s3, 3)
		checkErr(t, err, invalidSig("revoked_signer"))
		if got := e.metric("registry_approvals_total", "result", "invalid_sig"); got != 4 {
			t.Fatalf("invalid_sig approvals = %v, want 4", got)
		}
	})
}

// TestExpiry: 410 at expires_at (before and after the sweep), a fresh
// proposal when the expired payload is re-proposed, 404 once the
// tombstone is older than tombstone_ttl, and the sweep deletes it.
func TestExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		s := e.next("a")
		p := e.mustPropose(s)
		e.mustApprove(s, 1)
		time.Sleep(e.lim.ProposalTTL)
		expectGone(t, e, s)
		time.Sleep(SweepInterval)
		synctest.Wait()
		expectGone(t, e, s)
		if got := e.metric("registry_proposals_total", "result", "expired"); got != 1 {
			t.Fatalf("expired = %v", got)
		}
		if got := e.metric("registry_audit_events_total", "event", "proposal.expired"); got != 1 {
			t.Fatalf("audit proposal.expired = %v", got)
		}

		p2 := e.mustPropose(s)
		v, err := e.c.Proposal(p.ProposalID)
		if err != nil || p2.ExpiresAt <= p.ExpiresAt || len(v.Approvals) != 0 || v.Status != StatusPending {
			t.Fatalf("re-proposed %+v view %+v: %v", p2, v, err)
		}
		time.Sleep(e.lim.ProposalTTL)
		expectGone(t, e, s)
		time.Sleep(e.lim.TombstoneTTL)
		if _, err := e.c.Proposal(p.ProposalID); err == nil || httpx.AsError(err).Status != http.StatusNotFound {
			t.Fatalf("after tombstone_ttl: %v", err)
		}
		time.Sleep(SweepInterval)
		synctest.Wait()
		if n := storedProposals(t, e); n != 0 {
			t.Fatalf("%d proposals still stored after the sweep", n)
		}
		_, err = e.commit(s)
		checkErr(t, err, notFound)
	})
}

// expectGone checks that every read and write of s answers 410.
func expectGone(t *testing.T, e *env, s *descriptor.Set) {
	t.Helper()
	_, err := e.c.Proposal(descriptor.ProposalID(s.B3))
	checkErr(t, err, gone)
	_, err = e.approve(s, 2)
	checkErr(t, err, gone)
	_, err = e.commit(s)
	checkErr(t, err, gone)
	if open := e.c.OpenProposals(); len(open) != 0 {
		t.Fatalf("open proposals %+v", open)
	}
}

// storedProposals counts registry.db's proposals.
func storedProposals(t *testing.T, e *env) int {
	n := 0
	err := e.db.View(context.Background(), func(tx kv.Tx) error {
		c := tx.Bucket(BucketProposals).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStaleMarking: a commit marks every other open proposal for that
// version stale; approve and commit on them answer 409 chain_mismatch.
func TestStaleMarking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		a, b, c := e.next("a"), e.next("b"), e.next("c")
		e.mustPropose(b)
		e.proposeApproved(c)
		e.proposeApproved(a)
		e.mustCommit(a)
		for _, s := range []*descriptor.Set{b, c} {
			v, err := e.c.Proposal(descriptor.ProposalID(s.B3))
			if err != nil || v.Status != StatusStale {
				t.Fatalf("%s: %+v %v", s.Note, v, err)
			}
		}
		if open := e.c.OpenProposals(); len(open) != 0 {
			t.Fatalf("open %+v", open)
		}
		_, err := e.approve(b, 1)
		checkErr(t, err, want{status: http.StatusConflict, code: descriptor.CodeChainMismatch})
		_, err = e.commit(c)
		checkErr(t, err, want{status: http.StatusConflict, code: descriptor.CodeChainMismatch})
		if got := e.metric("registry_proposals_total", "result", "stale"); got != 2 {
			t.Fatalf("stale = %v", got)
		}
		e.restart() // stale survives a restart
		if v, _ := e.c.Proposal(descriptor.ProposalID(b.B3)); v.Status != StatusStale {
			t.Fatalf("after restart %+v", v)
		}
	})
}

// TestCommittedAtNeverDecreases: a clock stepping back reuses HEAD's
// committed_at.
func TestCommittedAtNeverDecreases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		time.Sleep(time.Hour)
		_, c1 := e.cycle("a")
		e.shiftClock(-30 * time.Minute)
		_, c2 := e.cycle("b")
		if c2.CommittedAt != c1.CommittedAt {
			t.Fatalf("committed_at %s after %s", c2.CommittedAt, c1.CommittedAt)
		}
		e.shiftClock(time.Hour)
		if _, c3 := e.cycle("c"); c3.CommittedAt <= c2.CommittedAt {
			t.Fatalf("committed_at %s after %s", c3.CommittedAt, c2.CommittedAt)
		}
	})
}

// TestTombstoneCap: at most MaxTombstones are kept, oldest evicted first.
func TestTombstoneCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		st := newState()
		st.setHead(e.c.Head())
		at := time.Now()
		for i := range MaxTombstones + 5 {
			p := &proposal{id: fmt.Sprintf("p_%032x", i), status: StatusPending}
			st.insert(p)
			st.closeAs(p, StatusStale, at.Add(time.Duration(i)))
		}
		st.evictOverCap()
		if st.nTombs != MaxTombstones || len(st.props) != MaxTombstones {
			t.Fatalf("%d tombstones, %d props", st.nTombs, len(st.props))
		}
		for i := range 5 {
			if st.props[fmt.Sprintf("p_%032x", i)] != nil {
				t.Fatalf("tombstone %d not evicted", i)
			}
		}
		if st.props[fmt.Sprintf("p_%032x", 5)] == nil {
			t.Fatal("tombstone 5 evicted")
		}
	})
}

// TestWriteReadiness: reasons in priority order, storage sticky, draining.
func TestWriteReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		e.c.SetWriteUnready(ReasonCheckpointLag, true)
		e.c.SetWriteUnready(ReasonMaintenance, true)
		e.c.SetWriteUnready("custom", true)
		if got := e.c.WriteUnready(); !slices.Equal(got, []string{"maintenance", "checkpoint_lag", "custom"}) {
			t.Fatalf("reasons %v", got)
		}
		if e.metric("registry_write_ready") != 0 {
			t.Fatal("write_ready gauge 1 while unready")
		}
		for _, r := range []string{ReasonCheckpointLag, ReasonMaintenance, "custom"} {
			e.c.SetWriteUnready(r, false)
		}
		if got := e.c.WriteUnready(); len(got) != 0 {
			t.Fatalf("reasons %v", got)
		}
		e.c.SetWriteUnready(ReasonStorage, true) // e.g. tlog.db failed
		e.c.SetWriteUnready(ReasonStorage, false)
		if got := e.c.WriteUnready(); !slices.Equal(got, []string{"storage"}) {
			t.Fatalf("storage not sticky: %v", got)
		}
		e.c.SetWriteUnready(ReasonDraining, true)
		_, err := e.propose(e.next("x"))
		checkErr(t, err, draining)
	})
}
