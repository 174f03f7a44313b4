package registry

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// link is what version v+1 is checked against: version v's payload_b3,
// committed_at and signer set.
type link struct {
	version     uint64
	b3          string
	committedAt string
	signers     *descriptor.SignerSet
}

// mismatch is one failed deep-verifier check: the version (for checkpoint
// checks, the checkpoint's size) and the check label of
// ron_audit_chain_verify_failures_total.
type mismatch struct {
	version uint64
	check   string
	detail  string
}

// Error renders "version <v>: <check> check failed: <detail>".
func (m *mismatch) Error() string {
	return fmt.Sprintf("version %d: %s check failed: %s", m.version, m.check, m.detail)
}

// mismatchf builds a mismatch.
func mismatchf(v uint64, check, format string, args ...any) *mismatch {
	return &mismatch{version: v, check: check, detail: fmt.Sprintf(format, args...)}
}

// leafSource gives the stored level-0 hashes covered by the published
// checkpoint (*tiles.Tree).
type leafSource interface {
	Size() uint64
	LeafHash(index uint64) ([32]byte, error)
}

// readFailure maps a log read error of version v to a mismatch: damage the
// segment reader found (CRC, framing, version), or nil for other errors
// (pruned, closed, I/O), which are not verdicts on the chain.
func readFailure(v uint64, err error) *mismatch {
	var ce *segment.CorruptError
	if !errors.As(err, &ce) {
		return nil
	}
	if ce.Check == segment.CheckVersion {
		return mismatchf(v, checkVersion, "%v", ce)
	}
	return mismatchf(v, checkCRC, "%v", ce)
}

// checkRecord runs every per-version check of docs/registry.md §6 on the
// artifact stored for version v: canonical form, version continuity,
// prev_hash link, payload_b3, ≥ m valid distinct signers of the previous
// version's set, monotonic committed_at and the leaf hash against the
// level-0 tile (when the checkpoint covers v). prev is nil at the anchor
// (genesis, or min_index after pruning), where the link and signature
// checks do not apply. It returns the link for v+1 (nil when the artifact
// is unusable) and the first failed check.
func checkRecord(v uint64, artifact []byte, prev *link, leaves leafSource) (*link, *mismatch) {
	art, err := descriptor.ParseArtifact(artifact)
	if err != nil {
		return nil, mismatchf(v, checkCanonical, "artifact does not parse: %v", err)
	}
	if !descriptor.IsCanonical(artifact) {
		return nil, mismatchf(v, checkCanonical, "artifact is not in canonical form")
	}
	set, err := descriptor.ParseCommitted(art.Payload)
	if err != nil {
		return nil, mismatchf(v, checkCanonical, "payload breaks the rules: %v", err)
	}
	next := &link{version: v, b3: art.PayloadB3, committedAt: art.CommittedAt, signers: descriptor.NewSignerSet(set, nil)}
	for _, check := range []func() *mismatch{
		func() *mismatch { return checkChain(v, art, prev) },
		func() *mismatch { return checkPayload(v, art) },
		func() *mismatch { return checkApprovals(v, art, prev) },
		func() *mismatch { return checkEncoding(v, art, artifact) },
		func() *mismatch { return checkTime(v, art, prev) },
		func() *mismatch { return checkLeafHash(v, artifact, leaves) },
	} {
		if m := check(); m != nil {
			return next, m
		}
	}
	return next, nil
}

// checkChain checks version continuity and the prev_hash link.
func checkChain(v uint64, art descriptor.Artifact, prev *link) *mismatch {
	switch {
	case art.Version != v:
		return mismatchf(v, checkVersion, "artifact carries version %d", art.Version)
	case prev == nil && v == 0 && art.PrevHash != descriptor.ZeroHash:
		return mismatchf(v, checkPrevHash, "genesis prev_hash is %s, want the zero hash", art.PrevHash)
	case prev == nil:
		return nil
	case prev.version+1 != v:
		return mismatchf(v, checkVersion, "follows version %d", prev.version)
	case art.PrevHash != prev.b3:
		return mismatchf(v, checkPrevHash, "prev_hash %s, version %d has payload_b3 %s", art.PrevHash, prev.version, prev.b3)
	}
	return nil
}

// checkPayload recomputes payload_b3.
func checkPayload(v uint64, art descriptor.Artifact) *mismatch {
	if got := descriptor.PayloadB3(art.Payload); got != art.PayloadB3 {
		return mismatchf(v, checkPayloadB3, "payload hashes to %s, artifact says %s", got, art.PayloadB3)
	}
	return nil
}

// checkApprovals checks ≥ m valid distinct approvals by the previous
// version's signers (not at the anchor).
func checkApprovals(v uint64, art descriptor.Artifact, prev *link) *mismatch {
	if prev == nil {
		return nil
	}
	err := prev.signers.VerifyQuorum(art.Approvals, art.PayloadB3)
	if err == nil {
		return nil
	}
	switch httpx.AsError(err).Code {
	case descriptor.CodeQuorumFailed, descriptor.CodeDuplicateApproval:
		return mismatchf(v, checkQuorum, "%v", err)
	}
	return mismatchf(v, checkSignature, "%v", err)
}

// checkEncoding re-encodes the artifact and compares the bytes.
func checkEncoding(v uint64, art descriptor.Artifact, artifact []byte) *mismatch {
	enc, err := descriptor.EncodeArtifact(art)
	if err != nil {
		return mismatchf(v, checkCanonical, "artifact does not re-encode: %v", err)
	}
	if !bytes.Equal(enc, artifact) {
		return mismatchf(v, checkCanonical, "re-encoding differs from the stored bytes")
	}
	return nil
}

// checkTime checks that committed_at never decreases (FormatTime strings
// sort in time order).
func checkTime(v uint64, art descriptor.Artifact, prev *link) *mismatch {
	if prev != nil && art.CommittedAt < prev.committedAt {
		return mismatchf(v, checkCommittedAt, "committed_at %s is before version %d's %s", art.CommittedAt, prev.version, prev.committedAt)
	}
	return nil
}

// checkLeafHash compares the RFC 6962 leaf hash with the level-0 tile, when
// the published checkpoint covers v.
func checkLeafHash(v uint64, artifact []byte, leaves leafSource) *mismatch {
	if leaves == nil || v >= leaves.Size() {
		return nil
	}
	stored, err := leaves.LeafHash(v)
	if err != nil {
		if errors.Is(err, tiles.ErrNotFound) {
			return nil
		}
		return mismatchf(v, checkLeaf, "level-0 tile: %v", err)
	}
	if leafHash(artifact) != stored {
		return mismatchf(v, checkLeaf, "leaf hash differs from the level-0 tile")
	}
	return nil
}

// leafHash is SHA-256(0x00 ‖ leaf).
func leafHash(leaf []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(leaf)
	return [32]byte(h.Sum(nil))
}

// checkCheckpoint checks the published checkpoint: its signature
// (checkpoint_sig) and its root against the stored tiles (root). An error
// that is no verdict (the store failed or closed) comes back as err.
func checkCheckpoint(tree *tiles.Tree) (*mismatch, error) {
	err := tree.VerifyCheckpoint()
	size := tree.Size()
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, tiles.ErrBadCheckpoint):
		return mismatchf(size, checkCheckpointSig, "checkpoint of size %d: %v", size, err), nil
	case errors.Is(err, tiles.ErrSplitView), errors.Is(err, tiles.ErrCorrupt):
		return mismatchf(size, checkRoot, "checkpoint of size %d: %v", size, err), nil
	}
	return nil, err
}
