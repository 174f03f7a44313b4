package committer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestHappyPath runs propose → approve ×2 → commit with M=2, N=3 on both
// backends and checks every response, the log, the snapshot and metrics.
func TestHappyPath(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testHappyPath(t, b) })
		})
	}
}

func testHappyPath(t *testing.T, b backend) {
	e := newEnv(t, b)
	defer e.close()
	if h := e.c.Head(); h.Version != 0 || h.Set.Quorum.M != 2 || len(h.Set.Signers) != 3 {
		t.Fatalf("genesis head %+v", h)
	}
	s := e.next("first")
	p := e.mustPropose(s)
	if p.ProposalID != descriptor.ProposalID(s.B3) || p.PayloadB3 != s.B3 || p.ExpiresAt == "" {
		t.Fatalf("proposed %+v", p)
	}
	if got := e.c.OpenProposals(); len(got) != 1 || got[0].Status != StatusPending || got[0].Version != 1 {
		t.Fatalf("open proposals %+v", got)
	}
	r1 := e.mustApprove(s, 1)
	if r1 != (registryapi.ApprovalResult{Status: StatusPending, Approvals: 1, Quorum: registryapi.Quorum{M: 2, N: 3}}) {
		t.Fatalf("approve 1: %+v", r1)
	}
	r2 := e.mustApprove(s, 3)
	if r2 != (registryapi.ApprovalResult{Status: StatusQuorumMet, Approvals: 2, Quorum: registryapi.Quorum{M: 2, N: 3}}) {
		t.Fatalf("approve 3: %+v", r2)
	}
	cm := e.mustCommit(s)
	if cm.Version != 1 || cm.PayloadB3 != s.B3 || cm.CommittedAt == "" {
		t.Fatalf("committed %+v", cm)
	}
	checkHead(t, e, cm)
	checkCommittedView(t, e, s, cm)
	checkArtifact(t, e, s, cm, []string{signerID(1), signerID(3)})
	synctest.Wait() // OnCommit runs after the reply
	if calls := e.committedCalls(); len(calls) != 1 || calls[0].Version != 1 || calls[0].CorrID != "corr-commit" {
		t.Fatalf("OnCommit calls %+v", calls)
	}
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"registry_commits_total", []string{"result", "ok"}, 1},
		{"registry_proposals_total", []string{"result", "accepted"}, 1},
		{"registry_approvals_total", []string{"result", "accepted"}, 2},
		{"registry_head_version", nil, 1},
		{"registry_pending_proposals", nil, 0},
		{"registry_signers", nil, 3},
		{"registry_quorum_m", nil, 2},
		{"registry_write_ready", nil, 1},
		{"registry_audit_events_total", []string{"event", "commit.accepted"}, 1},
		{"registry_group_commit_size_count", nil, 4},
	} {
		if got := e.metric(m.name, m.labels...); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}
}

// checkHead checks the HEAD snapshot against a commit.
func checkHead(t *testing.T, e *env, cm registryapi.Committed) {
	t.Helper()
	h := e.c.Head()
	if h.Version != cm.Version || h.PayloadB3 != cm.PayloadB3 || h.CommittedAt != cm.CommittedAt {
		t.Fatalf("head %d %s %s, want %+v", h.Version, h.PayloadB3, h.CommittedAt, cm)
	}
	var body registryapi.Committed
	if err := json.Unmarshal(h.Body, &body); err != nil || body.Version != cm.Version || body.PayloadB3 != cm.PayloadB3 {
		t.Fatalf("head body %s: %v", h.Body, err)
	}
	if want := `"1-` + cm.PayloadB3[3:19] + `"`; cm.Version == 1 && h.ETag != want {
		t.Fatalf("etag %s, want %s", h.ETag, want)
	}
}

// checkCommittedView checks GET /registry/proposals/{id} of a committed one.
func checkCommittedView(t *testing.T, e *env, s *descriptor.Set, cm registryapi.Committed) {
	t.Helper()
	v, err := e.c.Proposal(descriptor.ProposalID(s.B3))
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != StatusCommitted || v.CommittedVersion == nil || *v.CommittedVersion != cm.Version ||
		string(v.Payload) != string(s.Canonical) || v.Quorum != (registryapi.Quorum{M: 2, N: 3}) {
		t.Fatalf("view %+v", v)
	}
}

// checkArtifact reads the committed version from the log.
func checkArtifact(t *testing.T, e *env, s *descriptor.Set, cm registryapi.Committed, signers []string) {
	t.Helper()
	rec, err := e.log.Read(cm.Version)
	if err != nil {
		t.Fatal(err)
	}
	art, err := descriptor.ParseArtifact(rec.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	if art.PayloadB3 != s.B3 || art.CommittedAt != cm.CommittedAt || art.PrevHash != s.PrevHash || len(art.Approvals) != len(signers) {
		t.Fatalf("artifact %+v", art)
	}
	for i, id := range signers {
		if art.Approvals[i].SignerID != id {
			t.Fatalf("approval %d by %s, want %s", i, art.Approvals[i].SignerID, id)
		}
	}
	if string(e.c.Head().Artifact) != string(rec.Artifact) && e.c.Head().Version == cm.Version {
		t.Fatal("head artifact differs from the log record")
	}
	if rec.CorrID != "corr-commit" {
		t.Fatalf("record corr_id %q", rec.CorrID)
	}
}

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestAuditLines: accepted and rejected operations log the docs/registry.md §6 fields,
// with payload_b3 cut to 8 hex.
func TestAuditLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
		e := newEnv(t, memBackend, func(e *env) { e.logw = &buf })
		defer e.close()
		s := e.next("a")
		e.mustPropose(s)
		_, err := e.commit(s)
		checkErr(t, err, want{status: 422, code: descriptor.CodeQuorumFailed})
		want := map[string]map[string]any{
			"propose.accepted": {"proposal_id": descriptor.ProposalID(s.B3), "version": 1.0,
				"b3_prefix": s.B3[3:11], "corr_id": "corr-propose", "role": "registry"},
			"commit.rejected": {"code": "quorum_failed", "proposal_id": descriptor.ProposalID(s.B3),
				"version": 1.0, "b3_prefix": s.B3[3:11], "corr_id": "corr-commit"},
		}
		seen := 0
		for _, l := range buf.lines() {
			w, ok := want[fmt.Sprint(l["event"])]
			if !ok {
				continue
			}
			seen++
			for k, v := range w {
				if l[k] != v {
					t.Errorf("%s: %s = %v, want %v", l["event"], k, l[k], v)
				}
			}
			if l["level"] != "info" || l["message"] != "audit" {
				t.Errorf("audit line %v", l)
			}
		}
		if seen != 2 {
			t.Fatalf("saw %d of 2 audit lines: %v", seen, buf.lines())
		}
	})
}
