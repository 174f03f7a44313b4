package registry

import (
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// status is the body of GET /registry/status (docs/registry.md §2). It reads only
// snapshots and atomics, so it is cheap and safe at any time after Start.
func (r *Role) status() registryapi.Status {
	h := r.com.Head()
	if h == nil { // a replicated registry before its init entry
		h = &committer.Head{Set: &descriptor.Set{}}
	}
	reasons := r.com.WriteUnready()
	if reasons == nil {
		reasons = []string{}
	}
	signers := h.Set.SignerIDs()
	if signers == nil {
		signers = []string{}
	}
	return registryapi.Status{
		Head:                registryapi.Head{Version: h.Version, PayloadB3: h.PayloadB3, CommittedAt: h.CommittedAt},
		ReadReady:           r.readReady(),
		WriteReady:          len(reasons) == 0,
		WriteUnreadyReasons: reasons,
		ReadOnly:            r.Cfg.Load().ReadOnly,
		DevSigner:           r.dev != nil,
		Amnesia:             r.opt.Amnesia,
		Quorum:              registryapi.Quorum{M: h.Set.Quorum.M, N: h.Set.Quorum.N},
		Signers:             signers,
		Checkpoint:          registryapi.CheckpointStatus{Size: r.tree.Size(), AgeS: int64(r.ckpt.age() / time.Second)},
		MinIndex:            r.st.Log.MinIndex(),
		OpenProposals:       len(r.com.OpenProposals()),
		Verifier:            r.verifierStatus(),
	}
}

// verifierStatus is the status' verifier object.
func (r *Role) verifierStatus() registryapi.VerifierStatus {
	var vs registryapi.VerifierStatus
	if t := r.ver.Through(); t >= 0 {
		v := uint64(t)
		vs.VerifiedThrough = &v
	}
	if ns := r.ver.passStarted.Load(); ns != 0 {
		vs.PassStartedAt = descriptor.FormatTime(time.Unix(0, ns))
	}
	if f := r.lastFailure.Load(); f != nil {
		vs.LastFailure = &registryapi.VerifyFailure{Version: f.m.version, Check: f.m.check,
			At: descriptor.FormatTime(f.at), Message: f.m.detail}
	}
	return vs
}

// Details is the role's object in /api/v1/status: HEAD, write readiness
// and its reasons, the dev signer, checkpoint, min_index and the verifier's
// progress. Why writes are unready is the role's last_error (LastError).
func (r *Role) Details() any {
	if !r.running.Load() {
		return map[string]any{"started": false}
	}
	s := r.status()
	d := map[string]any{
		"head": s.Head.Version, "payload_b3_prefix": b3Prefix(s.Head.PayloadB3),
		"write_ready": s.WriteReady, "write_unready_reasons": s.WriteUnreadyReasons,
		"read_only": s.ReadOnly, "dev_signer": s.DevSigner, "checkpoint_size": s.Checkpoint.Size,
		"min_index": s.MinIndex, "open_proposals": s.OpenProposals,
		"verified_through": s.Verifier.VerifiedThrough,
	}
	d["origin"] = r.tree.Key().Origin()
	return d
}

// LastError implements runtime.LastErrorer: why writes are unready ("" when
// they are ready or the role is not running).
func (r *Role) LastError() string {
	if !r.running.Load() {
		return ""
	}
	return r.lastError(r.status().WriteUnreadyReasons)
}

// lastError explains write unreadiness: the latest chain failure when
// verify_failed is among the reasons, else the reasons themselves.
func (r *Role) lastError(reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	msg := "writes unready: " + strings.Join(reasons, ", ")
	if p := r.lastErr.Load(); p != nil {
		msg += ": " + *p
	}
	return msg
}

// b3Prefix is the first 8 hex digits of a payload_b3 (logs and status
// never carry a full one).
func b3Prefix(b3 string) string {
	h := strings.TrimPrefix(b3, "b3:")
	return h[:min(8, len(h))]
}
