package httpapi

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// impls are the two Client implementations every table runs against.
var impls = []struct {
	name string
	mk   func(e *env) registryapi.Client
}{
	{"local", func(e *env) registryapi.Client { return NewLocalClient(e.a) }},
	{"http", func(e *env) registryapi.Client { return e.httpClient() }},
}

// forEachClient runs fn in a fresh env for each implementation.
func forEachClient(t *testing.T, name string, fn func(t *testing.T, c registryapi.Client, e *env)) {
	for _, im := range impls {
		t.Run(name+"/"+im.name, func(t *testing.T) {
			run(t, func(t *testing.T, e *env) { fn(t, im.mk(e), e) })
		})
	}
}

// result holds a call's value and error until get checks it.
type result[T any] struct {
	v   T
	err error
}

// must captures a call's results.
func must[T any](v T, err error) result[T] { return result[T]{v, err} }

// get fails the test on the error and returns the value.
func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

// recv receives one update, failing after a minute of (bubble) time.
func recv(t *testing.T, ch <-chan registryapi.Update) registryapi.Update {
	t.Helper()
	select {
	case u, open := <-ch:
		if !open {
			t.Fatal("watch channel closed")
		}
		return u
	case <-time.After(time.Minute):
		t.Fatal("no update within a minute")
	}
	return registryapi.Update{}
}

func TestClientCycle(t *testing.T) {
	forEachClient(t, "cycle", func(t *testing.T, c registryapi.Client, e *env) {
		ctx := context.Background()
		if h := must(c.Head(ctx)).get(t); h.Version != 0 || h.PayloadB3 != e.c.Head().PayloadB3 {
			t.Fatalf("head %+v", h)
		}
		raw, b3 := e.nextPayload("cycle")
		id := descriptor.ProposalID(b3)
		p := must(c.ProposeRaw(ctx, proposeBody(raw))).get(t)
		if p.ProposalID != id || p.PayloadB3 != b3 || p.ExpiresAt == "" {
			t.Fatalf("proposed %+v", p)
		}
		again := must(c.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.2.3", Payload: raw, PayloadB3: b3})).get(t)
		if again != p {
			t.Fatalf("re-propose %+v, want %+v", again, p)
		}
		r1 := must(c.Approve(ctx, id, sign(1, b3))).get(t)
		r2 := must(c.Approve(ctx, id, sign(3, b3))).get(t)
		if r1 != (registryapi.ApprovalResult{Status: "pending", Approvals: 1, Quorum: q23}) || r2 != (registryapi.ApprovalResult{Status: "quorum_met", Approvals: 2, Quorum: q23}) {
			t.Fatalf("approvals %+v %+v", r1, r2)
		}
		if pr := must(c.Proposal(ctx, id)).get(t); pr.Status != "quorum_met" || len(pr.Approvals) != 2 || pr.PayloadB3 != b3 {
			t.Fatalf("proposal %+v", pr)
		}
		cm := must(c.Commit(ctx, id)).get(t)
		if cm.Version != 1 || cm.PayloadB3 != b3 || cm.CommittedAt == "" {
			t.Fatalf("committed %+v", cm)
		}
		if retry := must(c.Commit(ctx, id)).get(t); !reflect.DeepEqual(retry, cm) {
			t.Fatalf("commit retry %+v, want %+v", retry, cm)
		}
		pr := must(c.Proposal(ctx, id)).get(t)
		if pr.Status != "committed" || pr.CommittedVersion == nil || *pr.CommittedVersion != 1 {
			t.Fatalf("committed proposal %+v", pr)
		}
		art, body, err := c.Get(ctx, 1)
		if err != nil || art.Version != 1 || art.PayloadB3 != b3 || len(art.Approvals) != 2 || art.CommittedAt != cm.CommittedAt {
			t.Fatalf("get: %+v %v", art, err)
		}
		if rec, _ := e.log.Read(1); string(rec.Artifact) != string(body) {
			t.Fatal("get body differs from the log")
		}
		if h := must(c.Head(ctx)).get(t); h != (registryapi.Head{Version: 1, PayloadB3: b3, CommittedAt: cm.CommittedAt}) {
			t.Fatalf("head after commit %+v", h)
		}
	})
}

func TestClientProposalList(t *testing.T) {
	forEachClient(t, "list", func(t *testing.T, c registryapi.Client, e *env) {
		ctx := context.Background()
		rawA, b3A := e.nextPayload("a")
		time.Sleep(time.Second)
		rawB, b3B := e.nextPayload("b")
		must(c.ProposeRaw(ctx, proposeBody(rawB))).get(t)
		time.Sleep(time.Second)
		must(c.ProposeRaw(ctx, proposeBody(rawA))).get(t)
		list := must(c.Proposals(ctx)).get(t)
		if len(list) != 2 || list[0].PayloadB3 != b3B || list[1].PayloadB3 != b3A || list[0].Version != 1 ||
			list[0].Status != "pending" || list[0].Approvals != 0 {
			t.Fatalf("list %+v", list)
		}
		want := must(c.Proposal(ctx, descriptor.ProposalID(b3A))).get(t)
		got := proposalOf(must(e.c.Proposal(descriptor.ProposalID(b3A))).get(t))
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Fatalf("proposal %s, committer view %s", wb, gb)
		}
	})
}

func TestClientWatch(t *testing.T) {
	forEachClient(t, "watch", func(t *testing.T, c registryapi.Client, e *env) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.cycle("w1")
		fresh := must(c.Watch(ctx, nil)).get(t)
		if u := recv(t, fresh); u.Version != 1 || u.CorrID != "corr-w1" || u.PayloadB3 != e.c.Head().PayloadB3 {
			t.Fatalf("fresh start %+v", u)
		}
		since := uint64(0)
		resume := must(c.Watch(ctx, &since)).get(t)
		if u := recv(t, resume); u.Version != 1 {
			t.Fatalf("resume %+v", u)
		}
		cm := e.cycle("w2")
		for _, ch := range []<-chan registryapi.Update{fresh, resume} {
			u := recv(t, ch)
			if u != (registryapi.Update{Version: 2, PayloadB3: cm.PayloadB3, CommittedAt: cm.CommittedAt, CorrID: "corr-w2"}) {
				t.Fatalf("live %+v", u)
			}
		}
	})
}

func TestClientWatchBusy(t *testing.T) {
	forEachClient(t, "watch-busy", func(t *testing.T, c registryapi.Client, e *env) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.update(func(s *Settings) { s.StreamMaxClients = 1 })
		first := must(c.Watch(ctx, nil)).get(t)
		recv(t, first)
		_, err := c.Watch(ctx, nil)
		checkErr(t, "second watch", err, want{429, "busy", nil, 1})
		if got := e.metric("busy_rejections_total", "endpoint", endpointStream); got != 1 {
			t.Fatalf("busy_rejections %v", got)
		}
	})
}

// errCase is one row of the error table: act runs against a fresh env.
type errCase struct {
	name string
	act  func(ctx context.Context, c registryapi.Client, e *env) error
	w    want
}

// proposeRaw is an act proposing body.
func proposeRaw(body func(e *env) []byte) func(context.Context, registryapi.Client, *env) error {
	return func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.ProposeRaw(ctx, body(e))
		return err
	}
}

// proposed opens a proposal extending HEAD through the committer and
// returns its set.
func (e *env) proposed(note string, keys ...byte) *descriptor.Set {
	e.t.Helper()
	raw, _ := e.nextPayload(note)
	set := e.parse(raw)
	ctx := context.Background()
	if _, err := e.c.Propose(ctx, set, "corr"); err != nil {
		e.t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := e.c.Approve(ctx, descriptor.ProposalID(set.B3), sign(k, set.B3), "corr"); err != nil {
			e.t.Fatal(err)
		}
	}
	return set
}

// approveAct approves a fresh proposal with ap(set).
func approveAct(keys []byte, ap func(set *descriptor.Set) descriptor.Approval) func(context.Context, registryapi.Client, *env) error {
	return func(ctx context.Context, c registryapi.Client, e *env) error {
		set := e.proposed("x", keys...)
		_, err := c.Approve(ctx, descriptor.ProposalID(set.B3), ap(set))
		return err
	}
}

var errCases = []errCase{
	{"propose not json", proposeRaw(func(*env) []byte { return []byte("{") }),
		want{400, "malformed", map[string]any{"reason": "syntax"}, 0}},
	{"propose duplicate key", proposeRaw(func(*env) []byte { return []byte(`{"schema_version":"1.0.0","schema_version":"1.0.0"}`) }),
		want{400, "malformed", nil, 0}},
	{"propose unknown member", proposeRaw(func(e *env) []byte {
		raw, _ := e.nextPayload("x")
		return []byte(`{"schema_version":"1.0.0","x":1,"payload":` + string(raw) + `}`)
	}), want{400, "malformed", map[string]any{"reason": "unknown_field"}, 0}},
	{"propose schema 2", proposeRaw(func(e *env) []byte {
		raw, _ := e.nextPayload("x")
		return []byte(`{"schema_version":"2.0.0","payload":` + string(raw) + `}`)
	}), want{400, "bad_request", map[string]any{"reason": "schema_version"}, 0}},
	{"propose b3 mismatch", proposeRaw(func(e *env) []byte {
		raw, _ := e.nextPayload("x")
		return []byte(`{"schema_version":"1.0.0","payload_b3":"` + descriptor.ZeroHash + `","payload":` + string(raw) + `}`)
	}), want{400, "bad_request", map[string]any{"reason": "payload_b3_mismatch"}, 0}},
	{"propose chain mismatch", proposeRaw(func(e *env) []byte {
		return proposeBody(payload(5, e.c.Head().PayloadB3, "x"))
	}), want{409, "chain_mismatch", map[string]any{"head_version": 0}, 0}},
	{"propose future created_at", proposeRaw(func(e *env) []byte {
		var m map[string]any
		raw, _ := e.nextPayload("x")
		_ = json.Unmarshal(raw, &m)
		m["created_at"] = descriptor.FormatTime(time.Now().Add(time.Hour))
		raw, _ = json.Marshal(m)
		return proposeBody(raw)
	}), want{400, "bad_request", map[string]any{"reason": "future_time"}, 0}},
	{"propose too large", func(ctx context.Context, c registryapi.Client, e *env) error {
		e.update(func(s *Settings) { s.Limits.MaxPayloadBytes = 1024 })
		raw, _ := e.nextPayload(string(make([]byte, 700)))
		_, err := c.ProposeRaw(ctx, proposeBody(raw))
		return err
	}, want{413, "payload_too_large", nil, 0}},
	{"proposal bad id", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.Proposal(ctx, "p_XYZ")
		return err
	}, want{400, "bad_request", map[string]any{"reason": "proposal_id"}, 0}},
	{"proposal unknown", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.Proposal(ctx, descriptor.ProposalID(descriptor.ZeroHash))
		return err
	}, want{404, "not_found", nil, 0}},
	{"get beyond head", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, _, err := c.Get(ctx, 1)
		return err
	}, want{404, "not_found", nil, 0}},
	{"get pruned", func(ctx context.Context, c registryapi.Client, e *env) error {
		e.cycle("p")
		e.minIdx.Store(1)
		_, _, err := c.Get(ctx, 0)
		return err
	}, want{410, "gone", map[string]any{"reason": "pruned"}, 0}},
	{"approve unknown signer", approveAct(nil, func(s *descriptor.Set) descriptor.Approval { return sign(9, s.B3) }),
		want{422, "invalid_sig", map[string]any{"reason": "unknown_signer"}, 0}},
	{"approve bad signature", approveAct(nil, func(s *descriptor.Set) descriptor.Approval {
		a := sign(2, descriptor.ZeroHash)
		return a
	}), want{422, "invalid_sig", map[string]any{"reason": "bad_signature"}, 0}},
	{"approve algo", approveAct(nil, func(s *descriptor.Set) descriptor.Approval {
		a := sign(1, s.B3)
		a.Algo = "rsa"
		return a
	}), want{422, "invalid_sig", map[string]any{"reason": "unsupported_algo"}, 0}},
	{"approve sig encoding", approveAct(nil, func(s *descriptor.Set) descriptor.Approval {
		a := sign(1, s.B3)
		a.Sig = "AAAA"
		return a
	}), want{400, "malformed", map[string]any{"reason": "sig_encoding"}, 0}},
	{"approve future signed_at", approveAct(nil, func(s *descriptor.Set) descriptor.Approval {
		return descriptor.Sign(testKey(1), signerID(1), s.B3, time.Now().Add(time.Hour))
	}), want{400, "bad_request", map[string]any{"reason": "future_time"}, 0}},
	{"approve duplicate", approveAct([]byte{1}, func(s *descriptor.Set) descriptor.Approval { return sign(1, s.B3) }),
		want{409, "duplicate_approval", map[string]any{"approvals": 1, "status": "pending", "same_sig": true}, 0}},
	{"approve unknown proposal", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.Approve(ctx, descriptor.ProposalID(descriptor.ZeroHash), sign(1, descriptor.ZeroHash))
		return err
	}, want{404, "not_found", nil, 0}},
	{"approve committed", func(ctx context.Context, c registryapi.Client, e *env) error {
		set := e.proposed("x", 1, 2)
		must(e.c.Commit(ctx, descriptor.ProposalID(set.B3), "corr")).get(e.t)
		_, err := c.Approve(ctx, descriptor.ProposalID(set.B3), sign(3, set.B3))
		return err
	}, want{409, "conflict", map[string]any{"reason": "committed"}, 0}},
	{"approve stale", func(ctx context.Context, c registryapi.Client, e *env) error {
		stale := e.proposed("stale")
		e.cycle("winner")
		_, err := c.Approve(ctx, descriptor.ProposalID(stale.B3), sign(1, stale.B3))
		return err
	}, want{409, "chain_mismatch", map[string]any{"head_version": 1}, 0}},
	{"commit quorum", func(ctx context.Context, c registryapi.Client, e *env) error {
		set := e.proposed("x", 1)
		_, err := c.Commit(ctx, descriptor.ProposalID(set.B3))
		return err
	}, want{422, "quorum_failed", map[string]any{"have": 1, "need": 2}, 0}},
	{"commit stale", func(ctx context.Context, c registryapi.Client, e *env) error {
		stale := e.proposed("stale", 1, 2)
		e.cycle("winner")
		_, err := c.Commit(ctx, descriptor.ProposalID(stale.B3))
		return err
	}, want{409, "chain_mismatch", nil, 0}},
	{"commit unknown", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.Commit(ctx, descriptor.ProposalID(descriptor.ZeroHash))
		return err
	}, want{404, "not_found", nil, 0}},
	{"commit bad id", func(ctx context.Context, c registryapi.Client, e *env) error {
		_, err := c.Commit(ctx, "p_0")
		return err
	}, want{400, "bad_request", map[string]any{"reason": "proposal_id"}, 0}},
	{"expired", func(ctx context.Context, c registryapi.Client, e *env) error {
		set := e.proposed("x", 1, 2)
		time.Sleep(73 * time.Hour)
		id := descriptor.ProposalID(set.B3)
		if _, err := c.Approve(ctx, id, sign(3, set.B3)); httpx.AsError(err).Code != "gone" {
			return err
		}
		if _, err := c.Commit(ctx, id); httpx.AsError(err).Code != "gone" {
			return err
		}
		_, err := c.Proposal(ctx, id)
		return err
	}, want{410, "gone", map[string]any{"reason": "expired"}, 0}},
	{"read only", func(ctx context.Context, c registryapi.Client, e *env) error {
		e.update(func(s *Settings) { s.ReadOnly = true })
		raw, _ := e.nextPayload("x")
		_, err := c.ProposeRaw(ctx, proposeBody(raw))
		return err
	}, want{503, "not_ready", map[string]any{"reason": "maintenance"}, 30}},
	{"write unready", func(ctx context.Context, c registryapi.Client, e *env) error {
		e.c.SetWriteUnready(committer.ReasonVerifyFailed, true)
		_, err := c.Commit(ctx, descriptor.ProposalID(descriptor.ZeroHash))
		return err
	}, want{503, "not_ready", map[string]any{"reason": "verify_failed"}, 5}},
	{"draining", func(ctx context.Context, c registryapi.Client, e *env) error {
		e.c.Drain()
		_, err := c.Approve(ctx, descriptor.ProposalID(descriptor.ZeroHash), sign(1, descriptor.ZeroHash))
		return err
	}, want{503, "draining", nil, 5}},
	{"commit timeout then retry", func(ctx context.Context, c registryapi.Client, e *env) error {
		set := e.proposed("x", 1, 2)
		id := descriptor.ProposalID(set.B3)
		hold := e.db.holdNext()
		_, err := c.Commit(ctx, id)
		close(hold)
		if cm, rerr := c.Commit(ctx, id); rerr != nil || cm.Version != 1 {
			return rerr
		}
		return err
	}, want{503, "timeout", nil, 0}},
}

// TestClientErrors runs every error row against both implementations,
// each in a fresh env, checks the expected envelope and that both return
// the same one (status, code, details, Retry-After).
func TestClientErrors(t *testing.T) {
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]error
			for i, im := range impls {
				run(t, func(t *testing.T, e *env) {
					got[i] = tc.act(context.Background(), im.mk(e), e)
					checkErr(t, tc.name+"/"+im.name, got[i], tc.w)
				})
			}
			le, he := *httpx.AsError(got[0]), *httpx.AsError(got[1])
			le.Message, he.Message, le.CorrID, he.CorrID = "", "", "", ""
			if !reflect.DeepEqual(le, he) {
				t.Errorf("local %+v, http %+v", le, he)
			}
		})
	}
}

// q23 is the test registry's quorum.
var q23 = registryapi.Quorum{M: 2, N: 3}
