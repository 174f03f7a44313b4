package registry

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
)

// checkpointRetry is the pause policy after a failed round.
var checkpointRetry = runtime.Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second, Factor: 2, Jitter: 0.2}

// checkpointer is the worker registry-checkpointer (docs/registry.md §5): woken by
// commits, each round covers every durable version up to HEAD with a new
// signed checkpoint. It refuses to sign a split view, and versions left
// uncovered longer than checkpoint_max_lag make writes unready.
type checkpointer struct {
	log       *segment.Log
	tree      *tiles.Tree
	com       *committer.Committer
	cfg       func() Config
	now       func() time.Time
	met       roleMetrics
	logger    zerolog.Logger
	fail      func(*mismatch) // the role's verify_failed handler
	published func()          // a new checkpoint is out (wakes the verifier)
	wake      chan struct{}   // capacity 1: a commit happened
	progress  *signal         // broadcast after every round

	// Owned by the checkpointer goroutine (and Stop, after it ended).
	pending  time.Time // when uncovered versions were first seen; zero = covered
	failures int       // consecutive failed rounds
	halted   atomic.Bool
	signedAt atomic.Int64 // unix ns the published checkpoint was signed or loaded
}

// notify wakes the checkpointer without blocking (the committer's
// OnCommit).
func (c *checkpointer) notify() { poke(c.wake) }

// run is the registry-checkpointer worker.
func (c *checkpointer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		c.round(ctx)
		c.wait(ctx)
	}
	return nil
}

// wait blocks until a commit, the next retry or lag deadline, or ctx's end.
func (c *checkpointer) wait(ctx context.Context) {
	d, ok := c.nextWake()
	if !ok {
		select {
		case <-ctx.Done():
		case <-c.wake:
		}
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-c.wake:
	case <-t.C:
	}
}

// nextWake is how long to wait before the next round when no commit
// wakes it: until the lag limit passes (while versions are uncovered),
// or sooner, the retry after a failure.
func (c *checkpointer) nextWake() (time.Duration, bool) {
	if c.pending.IsZero() || c.halted.Load() {
		return 0, false
	}
	d := c.pending.Add(c.cfg().CheckpointMaxLag).Sub(c.now()) + time.Millisecond
	if d <= 0 { // already lagging: only retries are due
		d = checkpointRetry.Max
	}
	if c.failures > 0 {
		d = min(d, checkpointRetry.Delay(c.failures-1, nil))
	}
	return d, true
}

// round covers HEAD, then checks the lag.
func (c *checkpointer) round(ctx context.Context) {
	defer c.progress.broadcast()
	if c.halted.Load() {
		return
	}
	h, began := c.com.Head(), c.now()
	if h == nil { // a replicated registry before its init entry
		return
	}
	head := h.Version
	if c.tree.Size() <= head {
		if c.pending.IsZero() {
			c.pending = began
		}
		if _, err := regstore.ExtendTree(ctx, c.tree, c.log, head); err != nil {
			c.failed(ctx, err)
		} else {
			c.signed(began)
		}
	}
	c.checkLag()
}

// signed records a successful round that began at began: versions
// committed since are uncovered from then on.
func (c *checkpointer) signed(began time.Time) {
	c.met.checkpoint("ok")
	c.signedAt.Store(c.now().UnixNano())
	c.failures = 0
	c.pending = time.Time{}
	if h := c.com.Head(); h != nil && c.tree.Size() <= h.Version {
		c.pending = began
	}
	c.published()
}

// failed classifies a failed round: a split view or damaged log/tiles
// halts signing (verify_failed); anything else is a storage failure
// (write-unready storage until restart) retried with backoff.
func (c *checkpointer) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	c.met.checkpoint("error")
	c.failures++
	var ce *segment.CorruptError
	switch {
	case errors.Is(err, tiles.ErrSplitView):
		c.halt(mismatchf(c.tree.Size(), checkSplitView, "refusing to sign: %v", err))
	case errors.Is(err, tiles.ErrCorrupt), errors.Is(err, regstore.ErrTreeAhead):
		c.halt(mismatchf(c.tree.Size(), checkRoot, "refusing to sign: %v", err))
	case errors.As(err, &ce):
		c.halt(readFailure(ce.Version, err))
	default:
		c.com.SetWriteUnready(committer.ReasonStorage, true)
		c.logger.Error().Err(err).Int("attempt", c.failures).Msg("checkpoint failed; writes disabled (storage) until restart")
	}
}

// halt reports m, then stops all further signing: whoever sees halted
// finds the failure already recorded (this goroutine is the only signer,
// so nothing is signed in between).
func (c *checkpointer) halt(m *mismatch) {
	c.fail(m)
	c.halted.Store(true)
}

// checkLag turns checkpoint_lag on while versions stay uncovered longer
// than checkpoint_max_lag, and off once they are covered.
func (c *checkpointer) checkLag() {
	lagging := !c.pending.IsZero() && c.now().Sub(c.pending) > c.cfg().CheckpointMaxLag
	c.com.SetWriteUnready(committer.ReasonCheckpointLag, lagging)
}

// final signs a last checkpoint covering HEAD at shutdown, if time allows.
func (c *checkpointer) final(ctx context.Context) error {
	h := c.com.Head()
	if c.halted.Load() || ctx.Err() != nil || h == nil {
		return nil
	}
	if _, err := regstore.ExtendTree(ctx, c.tree, c.log, h.Version); err != nil {
		return err
	}
	c.signedAt.Store(c.now().UnixNano())
	return nil
}

// age is how long ago the published checkpoint was signed (or loaded at
// start).
func (c *checkpointer) age() time.Duration {
	return c.now().Sub(time.Unix(0, c.signedAt.Load()))
}
