package committer

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestBatchRechecks: messages that passed the handler checks against the
// same snapshot are re-checked by the committer in order within one batch:
// the second identical approval is a duplicate, a second commit of the
// same proposal is the same 201, an approval of a proposal made stale
// earlier in the batch is 409, and a proposal for v+1 that follows the
// commit of v is valid.
func TestBatchRechecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		a, b := e.next("a"), e.next("b")
		e.proposeApproved(a)
		e.mustPropose(b)
		next := e.payload(2, a.B3, "next", 0) // extends a, once a is committed
		var (
			wg         sync.WaitGroup
			cm1, cm2   registryapi.Committed
			errs       [5]error
			dupA, dupB registryapi.ApprovalResult
			prop       registryapi.Proposed
		)
		// batch 1: the same approval twice
		hold := holdCommitter(e, &wg, e.next("held"))
		wg.Go(func() { dupA, errs[0] = e.approve(b, 3) })
		wg.Go(func() { dupB, errs[1] = e.approve(b, 3) })
		synctest.Wait()
		close(hold)
		wg.Wait()
		// batch 2, taken round-robin (commits, approvals, proposals): commit
		// a, approve b (now stale), propose v+1, commit a again
		hold = holdCommitter(e, &wg, e.next("held 2"))
		wg.Go(func() { cm1, errs[2] = e.commit(a) })
		synctest.Wait()
		wg.Go(func() { cm2, errs[3] = e.commit(a) })
		synctest.Wait()
		wg.Go(func() { _, errs[4] = e.approve(b, 1) })
		synctest.Wait()
		wg.Go(func() { prop, _ = e.c.submitPropose(next) })
		synctest.Wait()
		close(hold)
		wg.Wait()

		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("duplicate approvals: %v / %v (%+v %+v)", errs[0], errs[1], dupA, dupB)
		}
		dup := errs[0]
		if dup == nil {
			dup = errs[1]
		}
		checkErr(t, dup, want{status: http.StatusConflict, code: descriptor.CodeDuplicateApproval,
			details: map[string]any{"same_sig": true, "approvals": 1}})
		if errs[2] != nil || errs[3] != nil || cm1.Version != 1 || cm1.CommittedAt != cm2.CommittedAt || cm2.Version != 1 {
			t.Fatalf("commits %+v %+v: %v %v", cm1, cm2, errs[2], errs[3])
		}
		checkErr(t, errs[4], want{status: http.StatusConflict, code: descriptor.CodeChainMismatch})
		if prop.ProposalID != descriptor.ProposalID(next.B3) {
			t.Fatalf("v+1 proposal in the same batch: %+v", prop)
		}
		if v, err := e.c.Proposal(prop.ProposalID); err != nil || v.Status != StatusPending {
			t.Fatalf("v+1 proposal %+v %v", v, err)
		}
	})
}

// submitPropose enqueues a proposal without the handler's chain check, as
// one that passed it just before HEAD moved would be.
func (c *Committer) submitPropose(s *descriptor.Set) (registryapi.Proposed, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.limits().CommitTimeout)
	defer cancel()
	r, err := c.submit(ctx, c.qProposals, endpointPropose, kindPropose, auditEvent{},
		&message{kind: kindPropose, set: s})
	return r.proposed, err
}

// TestReadHelpers covers SignerSet, the min_index helpers and Proposal's id
// check.
func TestReadHelpers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		ss := e.c.SignerSet()
		if ss.HeadVersion() != 0 || ss.Quorum() != (descriptor.Quorum{M: 2, N: 3}) {
			t.Fatalf("signer set head %d quorum %+v", ss.HeadVersion(), ss.Quorum())
		}
		ctx := context.Background()
		if v := must[uint64](t)(MinIndex(ctx, e.db)); v != 0 {
			t.Fatalf("min_index %d", v)
		}
		if err := SetMinIndex(ctx, e.db, 256); err != nil {
			t.Fatal(err)
		}
		if v := must[uint64](t)(MinIndex(ctx, e.db)); v != 256 {
			t.Fatalf("min_index %d", v)
		}
		_, err := e.c.Proposal("nope")
		checkErr(t, err, want{status: http.StatusBadRequest, code: httpx.CodeBadRequest})
		if CheckRecord(3, e.c.Head().Artifact) == nil || CheckRecord(0, []byte("{}")) == nil {
			t.Fatal("CheckRecord accepted a bad record")
		}
	})
}
