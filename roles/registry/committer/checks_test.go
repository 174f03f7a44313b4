package committer

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// checkCase is one row of a check table: run on a fresh env, it returns
// the error under test.
type checkCase struct {
	name string
	run  func(e *env) error
	want want
}

// runChecks runs every row on both backends, each in its own bubble.
func runChecks(t *testing.T, cases []checkCase) {
	for _, b := range backends {
		for _, tc := range cases {
			t.Run(string(b)+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					e := newEnv(t, b)
					defer e.close()
					checkErr(t, tc.run(e), tc.want)
				})
			})
		}
	}
}

var (
	notFound = want{status: http.StatusNotFound, code: httpx.CodeNotFound}
	gone     = want{status: http.StatusGone, code: httpx.CodeGone, details: map[string]any{"reason": "expired"}}
	badID    = want{status: http.StatusBadRequest, code: httpx.CodeBadRequest}
	chain    = want{status: http.StatusConflict, code: descriptor.CodeChainMismatch,
		details: map[string]any{"head_version": 0}}
	maintenance = want{status: http.StatusServiceUnavailable, code: httpx.CodeNotReady,
		details: map[string]any{"reason": "maintenance"}, retry: 30}
	verifyFailed = want{status: http.StatusServiceUnavailable, code: httpx.CodeNotReady,
		details: map[string]any{"reason": "verify_failed"}, retry: 5}
	draining = want{status: http.StatusServiceUnavailable, code: httpx.CodeDraining, retry: 5}
)

func invalidSig(reason string) want {
	return want{status: http.StatusUnprocessableEntity, code: descriptor.CodeInvalidSig,
		details: map[string]any{"reason": reason}}
}

// TestProposeChecks covers the committer's part of the docs/registry.md §2 propose order.
func TestProposeChecks(t *testing.T) {
	runChecks(t, []checkCase{
		{"maintenance", func(e *env) error {
			e.c.SetWriteUnready(ReasonMaintenance, true)
			_, err := e.propose(e.next("x"))
			return err
		}, maintenance},
		{"verify_failed", func(e *env) error {
			e.c.SetWriteUnready(ReasonVerifyFailed, true)
			_, err := e.propose(e.next("x"))
			return err
		}, verifyFailed},
		{"draining", func(e *env) error {
			e.c.Drain()
			_, err := e.propose(e.next("x"))
			return err
		}, draining},
		{"version_not_head_plus_1", func(e *env) error {
			_, err := e.propose(e.payload(2, e.c.Head().PayloadB3, "x", 0))
			if got := httpx.AsError(err).Details["head_payload_b3"]; got != e.c.Head().PayloadB3 {
				e.t.Errorf("head_payload_b3 %v, want %s", got, e.c.Head().PayloadB3)
			}
			return err
		}, chain},
		{"prev_hash_not_head", func(e *env) error {
			_, err := e.propose(e.payload(1, descriptor.ZeroHash, "x", 0))
			return err
		}, chain},
		{"max_open_proposals", func(e *env) error {
			e.lim.MaxOpenProposals = 1
			e.mustPropose(e.next("a"))
			_, err := e.propose(e.next("b"))
			return err
		}, want{status: http.StatusTooManyRequests, code: httpx.CodeBusy, retry: 1}},
	})
}

// TestProposeIdempotent: re-posting an open proposal returns the same 202.
func TestProposeIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, memBackend)
		defer e.close()
		s := e.next("a")
		p1 := e.mustPropose(s)
		e.mustApprove(s, 1)
		time.Sleep(time.Second) // fake time: the repeat must not move expires_at
		p2 := e.mustPropose(s)
		if p1 != p2 {
			t.Fatalf("repeat %+v, want %+v", p2, p1)
		}
		if v, _ := e.c.Proposal(p1.ProposalID); len(v.Approvals) != 1 {
			t.Fatalf("repeat changed the proposal: %+v", v)
		}
		if got := e.metric("registry_proposals_total", "result", "accepted"); got != 1 {
			t.Fatalf("accepted = %v", got)
		}
	})
}

// TestApproveChecks covers the docs/registry.md §2 approve order: id form, existence,
// state, algo, signer, signature, duplicate.
func TestApproveChecks(t *testing.T) {
	approveWith := func(e *env, s *descriptor.Set, a descriptor.Approval) error {
		_, err := e.c.Approve(context.Background(), descriptor.ProposalID(s.B3), a, "c")
		return err
	}
	runChecks(t, []checkCase{
		{"not_ready", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			e.c.SetWriteUnready(ReasonCheckpointLag, true)
			_, err := e.approve(s, 1)
			return err
		}, want{status: http.StatusServiceUnavailable, code: httpx.CodeNotReady,
			details: map[string]any{"reason": "checkpoint_lag"}, retry: 5}},
		{"bad_id", func(e *env) error {
			_, err := e.c.Approve(context.Background(), "p_XYZ", e.sign(1, e.next("a")), "c")
			return err
		}, badID},
		{"unknown", func(e *env) error { _, err := e.approve(e.next("a"), 1); return err }, notFound},
		{"expired", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			e.shiftClock(e.lim.ProposalTTL)
			_, err := e.approve(s, 1)
			return err
		}, gone},
		{"committed_before_algo", func(e *env) error {
			s, _ := e.cycle("a")
			a := e.sign(3, s)
			a.Algo = "rsa"
			return approveWith(e, s, a)
		}, want{status: http.StatusConflict, code: httpx.CodeConflict, details: map[string]any{"reason": "committed"}}},
		{"stale", func(e *env) error {
			a, b := e.next("a"), e.next("b")
			e.mustPropose(b)
			e.proposeApproved(a)
			e.mustCommit(a)
			_, err := e.approve(b, 1)
			return err
		}, want{status: http.StatusConflict, code: descriptor.CodeChainMismatch, details: map[string]any{"head_version": 1}}},
		{"unsupported_algo", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			a := e.sign(1, s)
			a.Algo = "rsa"
			return approveWith(e, s, a)
		}, invalidSig("unsupported_algo")},
		{"unknown_signer", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			return approveWith(e, s, descriptor.Sign(testKey(9), signerID(9), s.B3, e.now()))
		}, invalidSig("unknown_signer")},
		{"bad_signature", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			return approveWith(e, s, e.sign(1, e.next("other")))
		}, invalidSig("bad_signature")},
		{"duplicate_checked_after_signature", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			e.mustApprove(s, 1)
			return approveWith(e, s, e.sign(1, e.next("other")))
		}, invalidSig("bad_signature")},
		{"duplicate", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			e.mustApprove(s, 1)
			_, err := e.approve(s, 1)
			return err
		}, want{status: http.StatusConflict, code: descriptor.CodeDuplicateApproval,
			details: map[string]any{"approvals": 1, "status": "pending", "same_sig": true}}},
		{"duplicate_quorum_met", func(e *env) error {
			s := e.next("a")
			e.proposeApproved(s)
			_, err := e.approve(s, 2)
			return err
		}, want{status: http.StatusConflict, code: descriptor.CodeDuplicateApproval,
			details: map[string]any{"approvals": 2, "status": "quorum_met", "same_sig": true}}},
	})
}

// TestCommitChecks covers the docs/registry.md §2 commit order: expired, committed (same
// 201), stale or HEAD mismatch (CAS), quorum.
func TestCommitChecks(t *testing.T) {
	runChecks(t, []checkCase{
		{"not_ready", func(e *env) error {
			s := e.next("a")
			e.proposeApproved(s)
			e.c.SetWriteUnready(ReasonMaintenance, true)
			_, err := e.commit(s)
			return err
		}, maintenance},
		{"bad_id", func(e *env) error {
			_, err := e.c.Commit(context.Background(), "p_"+string(make([]byte, 32)), "c")
			return err
		}, badID},
		{"unknown", func(e *env) error { _, err := e.commit(e.next("a")); return err }, notFound},
		{"expired_with_quorum", func(e *env) error {
			s := e.next("a")
			e.proposeApproved(s)
			e.shiftClock(e.lim.ProposalTTL)
			_, err := e.commit(s)
			return err
		}, gone},
		{"stale", func(e *env) error {
			a, b := e.next("a"), e.next("b")
			e.proposeApproved(b)
			e.proposeApproved(a)
			e.mustCommit(a)
			_, err := e.commit(b)
			if got := e.metric("commit_cas_fail_total"); got != 1 {
				e.t.Errorf("commit_cas_fail_total = %v, want 1 (the committer's CAS)", got)
			}
			return err
		}, want{status: http.StatusConflict, code: descriptor.CodeChainMismatch, details: map[string]any{"head_version": 1}}},
		{"quorum_failed", func(e *env) error {
			s := e.next("a")
			e.mustPropose(s)
			e.mustApprove(s, 2)
			_, err := e.commit(s)
			return err
		}, want{status: http.StatusUnprocessableEntity, code: descriptor.CodeQuorumFailed,
			details: map[string]any{"have": 1, "need": 2}}},
	})
}

// TestCommitIdempotent: a retry after success returns the same 201 body,
// in the same process and after a re-Open on the same stores.
func TestCommitIdempotent(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, b)
				defer e.close()
				s, first := e.cycle("a")
				open := e.next("open")
				p := e.mustPropose(open)
				time.Sleep(time.Second)
				if again := e.mustCommit(s); again.Version != first.Version || again.CommittedAt != first.CommittedAt {
					t.Fatalf("retry %+v, want %+v", again, first)
				}
				e.restart()
				again := e.mustCommit(s)
				if again.Version != first.Version || again.PayloadB3 != first.PayloadB3 || again.CommittedAt != first.CommittedAt {
					t.Fatalf("retry after restart %+v, want %+v", again, first)
				}
				if p2 := e.mustPropose(open); p2 != p {
					t.Fatalf("propose after restart %+v, want %+v", p2, p)
				}
				if got := e.metric("registry_commits_total", "result", "ok"); got != 1 {
					t.Fatalf("commits ok = %v (repeats are not counted)", got)
				}
			})
		})
	}
}
