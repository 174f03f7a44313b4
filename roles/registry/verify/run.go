package verify

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
)

// run is the state of one verification.
type run struct {
	opt      Options
	f        *fetcher
	cp       Checkpoint
	minIndex uint64
	chain    chain
	levels   *levels
	res      Result
}

// Run verifies the registry at opt.URL (see the package doc for the
// steps). It returns the Result on success; a failed check is a
// *Mismatch, an unreachable registry an *UnreachableError, a registry
// answer the verifier cannot use an *httpx.Error (with details.path).
func Run(ctx context.Context, opt Options) (Result, error) {
	opt, err := opt.normalize()
	if err != nil {
		return Result{}, err
	}
	r := &run{opt: opt, f: &fetcher{base: opt.URL, hc: opt.HTTP, opt: opt}, chain: chain{genesis: opt.Genesis}}
	r.res.URL = opt.URL
	if err := r.checkpoint(ctx); err != nil {
		return Result{}, err
	}
	if r.cp.Size == 0 {
		return Result{}, mismatch(CheckCheckpoint, "the checkpoint covers no version (the log has no genesis)")
	}
	for _, step := range []func(context.Context) error{
		r.status, r.checkLeaves, r.checkTiles, r.checkInclusion, r.checkEnds, r.checkPins,
	} {
		if err := step(ctx); err != nil {
			return Result{}, err
		}
	}
	fmt.Fprintf(opt.Progress, "ok: %s size %d root %s\n", r.cp.Origin, r.cp.Size, r.cp.Root)
	return r.res, nil
}

// checkpoint is step 1: fetch and open the checkpoint.
func (r *run) checkpoint(ctx context.Context) error {
	v, unpinned, err := r.f.verifier(ctx, r.opt.LogKey)
	if err != nil {
		return err
	}
	if unpinned {
		fmt.Fprintf(r.opt.Progress, "warning: unpinned: using the log key the server publishes (%s); pass --log-key to pin it\n", v.Name())
	}
	msg, err := r.f.get(ctx, "/registry/log/checkpoint", maxSmall)
	if err != nil {
		return err
	}
	if r.cp, err = ParseCheckpoint(msg, v); err != nil {
		return err
	}
	r.res.Unpinned, r.res.Origin, r.res.Size = unpinned, r.cp.Origin, r.cp.Size
	r.res.Root = base64.StdEncoding.EncodeToString(r.cp.Root[:])
	fmt.Fprintf(r.opt.Progress, "checkpoint: %s size %d root %s\n", r.cp.Origin, r.cp.Size, r.cp.Root)
	return nil
}

// status is step 2's first half: read min_index.
func (r *run) status(ctx context.Context) error {
	body, err := r.f.get(ctx, "/registry/status", maxStatus)
	if err != nil {
		return err
	}
	var st struct {
		MinIndex *uint64 `json:"min_index"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.MinIndex == nil {
		return fmt.Errorf("verify: /registry/status has no min_index")
	}
	if *st.MinIndex >= r.cp.Size {
		return mismatch(CheckCheckpoint, "min_index %d is not below the checkpoint size %d", *st.MinIndex, r.cp.Size)
	}
	r.minIndex, r.res.MinIndex = *st.MinIndex, *st.MinIndex
	if r.minIndex > 0 {
		fmt.Fprintf(r.opt.Progress, "pruned below version %d: it is anchored by the root only\n", r.minIndex)
	}
	r.levels = newLevels(r.cp.Size)
	return nil
}

// checkEnds is step 4: the served artifact of the last version equals the
// last leaf, and HEAD is at or past the checkpoint.
func (r *run) checkEnds(ctx context.Context) error {
	last := r.cp.Size - 1
	body, err := r.f.get(ctx, "/registry/"+strconv.FormatUint(last, 10), maxArtifact)
	if err != nil {
		return err
	}
	if !bytes.Equal(body, r.chain.lastLeaf) {
		return atVersion(last, CheckArtifact, "GET /registry/%d is not byte-equal to leaf %d", last, last)
	}
	body, err = r.f.get(ctx, "/registry/head", maxSmall)
	if err != nil {
		return err
	}
	var head struct {
		Version   *uint64 `json:"version"`
		PayloadB3 string  `json:"payload_b3"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Version == nil {
		return atVersion(last, CheckHead, "/registry/head is not {version, payload_b3, committed_at}")
	}
	switch {
	case *head.Version < last:
		return atVersion(last, CheckHead, "HEAD %d is behind the checkpoint's last version %d", *head.Version, last)
	case *head.Version == last && head.PayloadB3 != r.chain.lastB3:
		return atVersion(last, CheckHead, "HEAD payload_b3 %s ≠ the last leaf's %s", head.PayloadB3, r.chain.lastB3)
	}
	r.res.Head = *head.Version
	return nil
}

// checkPins is step 5: the genesis pin and the saved state.
func (r *run) checkPins(ctx context.Context) error {
	if r.opt.Genesis != "" && r.minIndex > 0 {
		return atVersion(0, CheckGenesis, "version 0 is pruned (min_index %d): the pin cannot be checked", r.minIndex)
	}
	if r.opt.StateFile == "" {
		return nil
	}
	return r.checkState(ctx)
}
