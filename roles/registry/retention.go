package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
)

// retention is the worker registry-retention (docs/registry.md §5): every
// retention_interval it prunes the oldest segments the policy lets go,
// but only segments wholly below the durable checkpoint's size, verified
// by the deep verifier in this process, and not holding HEAD. It is the
// only pruner.
type retention struct {
	log     *segment.Log
	db      kv.DB // registry.db (min_index)
	tree    *tiles.Tree
	com     *committer.Committer
	through func() int64 // the deep verifier's verified prefix
	cfg     func() Config
	now     func() time.Time
	met     roleMetrics
	logger  zerolog.Logger
}

// run is the registry-retention worker.
func (t *retention) run(ctx context.Context) error {
	for runtime.Sleep(ctx, t.cfg().RetentionInterval) {
		if _, err := t.round(ctx); err != nil && ctx.Err() == nil {
			t.logger.Error().Err(err).Msg("retention round failed; the next one retries")
		}
	}
	return nil
}

// round prunes what the policy and the safety conditions allow: raise
// min_index durably, delete the segment files, fsync the directory. It
// returns how many segments went.
func (t *retention) round(ctx context.Context) (int, error) {
	cfg := t.cfg()
	if cfg.RetentionPolicy == PolicyOff {
		return 0, nil
	}
	cut, skip := t.plan(cfg)
	if skip != "" {
		t.met.pruneSkipped(skip)
		if skip == skipNoCheckpoint && t.tree.Size() == 0 {
			t.logger.Warn().Msg("retention: no durable checkpoint yet; nothing is pruned")
		}
	}
	if cut <= t.log.MinIndex() {
		return 0, nil
	}
	sctx, cancel := context.WithTimeout(ctx, regstore.StoreTimeout)
	err := committer.SetMinIndex(sctx, t.db, cut)
	cancel()
	if err != nil {
		t.com.SetWriteUnready(committer.ReasonStorage, true)
		return 0, fmt.Errorf("registry: raise min_index to %d: %w", cut, err)
	}
	removed, err := t.log.Prune(cut)
	t.met.pruned(removed)
	t.met.audit(eventPrune)
	t.logger.Info().Str("event", eventPrune).Uint64("version", cut).Int("segments", removed).
		Msg("registry segments pruned; min_index raised")
	return removed, err
}

// plan returns the new min_index (the first version kept) and, when a
// segment the policy lets go fails a safety condition, the skip reason.
func (t *retention) plan(cfg Config) (uint64, string) {
	cut := t.log.MinIndex()
	h := t.com.Head()
	if h == nil { // a replicated registry before its init entry
		return cut, ""
	}
	size, head, through := t.tree.Size(), h.Version, t.through()
	total := t.log.Bytes()
	for _, s := range t.log.Segments() {
		if s.Records == 0 {
			break
		}
		last := s.First + uint64(s.Records) - 1
		if last >= head || !t.wants(cfg, last, head, total) {
			break
		}
		switch {
		case size == 0 || last >= size:
			return cut, skipNoCheckpoint
		case through < 0 || last > uint64(through):
			return cut, skipNotVerified
		}
		cut, total = last+1, total-s.Bytes
	}
	return cut, ""
}

// wants reports whether the policy lets the oldest remaining segment
// (versions up to last) go, total being the log's size with the segments
// before it already gone.
func (t *retention) wants(cfg Config, last, head uint64, total int64) bool {
	switch cfg.RetentionPolicy {
	case PolicyByCount:
		return head-last >= uint64(cfg.RetentionMaxCount)
	case PolicyBySize:
		return total > int64(cfg.RetentionTargetBytes)
	case PolicyByAge:
		at, err := t.committedAt(last)
		return err == nil && t.now().Sub(at) > cfg.RetentionMaxAge
	}
	return false
}

// committedAt reads version v's committed_at.
func (t *retention) committedAt(v uint64) (time.Time, error) {
	rec, err := t.log.Read(v)
	if err != nil {
		return time.Time{}, err
	}
	art, err := descriptor.ParseArtifact(rec.Artifact)
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, art.CommittedAt)
}
