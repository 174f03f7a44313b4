package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/store"
)

// upgradePage is how many objects the sidecar upgrade lists at a time.
const upgradePage = 1000

// sidecarUpgrade is the progress of the background v1 → v2 sidecar upgrade
// (docs/storage.md §5): one pass over every object, started with the role.
// Its counters are read by Details and the metrics while the pass writes
// them.
type sidecarUpgrade struct {
	state    atomic.Value  // "pending", "running", "done", "stopped" or "failed: <reason>"
	total    atomic.Int64  // objects held when the pass began
	scanned  atomic.Int64  // objects looked at
	upgraded atomic.Int64  // v1 sidecars rewritten as v2 (the pass's and on-demand ones)
	corrupt  atomic.Int64  // objects quarantined because their data did not hash to the id
	finished atomic.Int64  // Unix ms the pass ended, 0 while running
	ended    chan struct{} // closed once the pass has ended (made by New)
	endOnce  sync.Once
}

// end records the pass's final state and closes ended.
func (u *sidecarUpgrade) end(state string) {
	u.state.Store(state)
	u.finished.Store(time.Now().UnixMilli())
	u.endOnce.Do(func() { close(u.ended) })
}

// details is Details()["sidecar_upgrade"].
func (u *sidecarUpgrade) details() map[string]any {
	state, _ := u.state.Load().(string)
	if state == "" {
		state = "pending" // the role has not run the pass yet
	}
	d := map[string]any{"state": state, "objects": u.total.Load(), "scanned": u.scanned.Load(),
		"upgraded": u.upgraded.Load(), "corrupt": u.corrupt.Load()}
	if ms := u.finished.Load(); ms > 0 {
		d["finished"] = time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	return d
}

// runSidecarUpgrade is the "sidecar-upgrade" task: it walks every object
// once, upgrading v1 sidecars one object at a time (the engine hashes under
// its CPU semaphore). Objects deleted meanwhile are skipped; corrupt ones
// are quarantined and counted. It returns nil when the pass is done or ctx
// ends; another error stops the pass (reported in the state) without
// failing the role: reads of objects not upgraded still work.
func (r *Role) runSidecarUpgrade(ctx context.Context) error {
	u := &r.upgrade
	u.total.Store(r.engine.Stats().Objects)
	if r.engineName() == "memory" { // it never holds a v1 sidecar
		u.end("done")
		return nil
	}
	u.state.Store("running")
	err := r.upgradePass(ctx)
	switch {
	case ctx.Err() != nil:
		u.end("stopped")
	case err != nil:
		u.end("failed: " + err.Error())
		r.Log.Warn().Err(err).Msg("sidecar upgrade stopped; objects not upgraded stay readable and are upgraded when their outboard is asked for")
	default:
		u.end("done")
	}
	return nil
}

// upgradePass lists every object page by page and upgrades each one.
func (r *Role) upgradePass(ctx context.Context) error {
	var after *store.ID
	for {
		page, err := r.engine.List(ctx, after, upgradePage)
		if err != nil {
			return err
		}
		for _, info := range page {
			if _, err := r.upgradeObject(ctx, info.ID); err != nil && !skippable(err) {
				return err
			}
			r.upgrade.scanned.Add(1)
		}
		if len(page) < upgradePage {
			return nil
		}
		after = &page[len(page)-1].ID
	}
}

// skippable reports upgrade errors that concern one object only: it was
// deleted or quarantined meanwhile, or its data was corrupt (quarantined
// now).
func skippable(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrQuarantined) || errors.Is(err, store.ErrCorrupt)
}

// upgradeObject upgrades id's sidecar if it is v1 (engine.Upgrade) and
// counts the outcome: for the pass and for on-demand upgrades alike.
func (r *Role) upgradeObject(ctx context.Context, id store.ID) (bool, error) {
	up, err := r.engine.Upgrade(ctx, id)
	switch {
	case up:
		r.upgrade.upgraded.Add(1)
		r.metrics.sidecarUpgrade("upgraded")
	case errors.Is(err, store.ErrCorrupt):
		r.upgrade.corrupt.Add(1)
		r.metrics.sidecarUpgrade("corrupt")
	}
	return up, err
}
