package registry

import (
	"context"
	"fmt"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// spec is the store spec of cfg for this role.
func (r *Role) spec(cfg Config) regstore.Spec {
	return regstore.Spec{DataDir: r.opt.DataDir, Amnesia: r.opt.Amnesia, Origin: cfg.LogOrigin,
		SegmentRecords: cfg.SegmentRecords}
}

// openAll opens the stores, bootstraps or recovers the log, and opens the
// committer and the tree (Start step 1). On error nothing stays open.
func (r *Role) openAll(ctx context.Context, cfg Config) error {
	spec := r.spec(cfg)
	st, err := regstore.Open(ctx, spec)
	if err != nil {
		return err
	}
	r.st = st
	if err := r.openCore(ctx, cfg, spec); err != nil {
		_ = st.Close()
		return err
	}
	r.open.Store(true)
	return nil
}

// openCore bootstraps (when no log exists), opens the committer over the
// recovered log and the tree over tlog.db, and builds the workers.
func (r *Role) openCore(ctx context.Context, cfg Config, spec regstore.Spec) error {
	var plan genesisPlan
	var err error
	if r.replicated() { // genesis comes with the log's init entry (registry-init)
		err = r.checkUnlogged(ctx)
	} else {
		plan, err = r.bootstrap(ctx, cfg, spec)
	}
	if err != nil {
		return err
	}
	r.logRecovery()
	com, err := committer.Open(ctx, r.committerOptions(cfg), plan.genesis, r.st.Rec)
	if err != nil {
		return fmt.Errorf("registry: open committer: %w", err)
	}
	r.com = com
	if h := com.Head(); plan.dev == nil && h != nil {
		plan.dev = devSignerOf(spec, h.Set)
	}
	r.dev = plan.dev
	tctx, cancel := context.WithTimeout(ctx, regstore.StoreTimeout)
	defer cancel()
	if r.tree, err = tiles.OpenTree(tctx, r.st.TlogDB, r.st.Key); err != nil {
		return fmt.Errorf("registry: open tlog.db: %w", err)
	}
	if r.replicated() {
		r.openMachine()
	}
	r.buildWorkers()
	r.registerGauges()
	if cfg.ReadOnly {
		r.freeze(true)
	}
	r.announce()
	return nil
}

// committerOptions are the committer's options over the opened stores.
func (r *Role) committerOptions(cfg Config) committer.Options {
	opt := committer.Options{Log: r.st.Log, DB: r.st.RegDB, Now: r.now, Metrics: r.opt.Metrics, Logger: r.opt.Log,
		OnCommit: r.onCommit, CPU: r.cpu, Limits: func() committer.Limits { return r.config().limits() }}
	opt.QueueCapacity.Proposals = cfg.QueueProposals
	opt.QueueCapacity.Approvals = cfg.QueueApprovals
	opt.QueueCapacity.Commits = cfg.QueueCommits
	if r.replicated() {
		r.replicaOptions(&opt)
	}
	return opt
}

// bootstrap returns the genesis plan: nothing when a log exists (warning
// when configured trust roots differ from its genesis), else trust roots
// or the dev signer.
func (r *Role) bootstrap(ctx context.Context, cfg Config, spec regstore.Spec) (genesisPlan, error) {
	empty, err := r.st.Empty(ctx)
	if err != nil {
		return genesisPlan{}, fmt.Errorf("registry: read HEAD: %w", err)
	}
	if !empty {
		r.warnTrustRoots(cfg, r.st.Log)
		return genesisPlan{}, nil
	}
	return planGenesis(cfg, spec, r.now())
}

// logRecovery logs and audits a truncated torn tail.
func (r *Role) logRecovery() {
	if rec := r.st.Rec; rec.Truncated > 0 {
		r.met.audit(eventTruncate)
		r.Log.Info().Str("event", eventTruncate).Int64("bytes", rec.Truncated).Int("records_beyond_head", len(rec.Beyond)).
			Msg("registry log recovery cut a torn tail")
	}
}

// announce logs the dev signer and amnesia warnings.
func (r *Role) announce() {
	if r.dev != nil {
		ev := r.Log.Warn().Str("signer", r.dev.ID).Str("quorum", "1 of 1")
		if r.dev.Path != "" {
			ev = ev.Str("key_file", r.dev.Path)
		}
		ev.Msg("registry runs on the dev signer: anyone with its key controls the control plane; not for production")
	}
	if r.opt.Amnesia {
		r.Log.Warn().Str("verifier_key", r.st.Key.VerifierKey()).
			Msg("registry amnesia: history, keys and checkpoints are RAM-only; this log identity ends with the process")
	}
}

// buildWorkers builds the checkpointer, deep verifier and retention.
func (r *Role) buildWorkers() {
	r.ver = newVerifier(r.st.Log, r.tree, r.config, r.met, r.verifyFailed)
	r.ver.now, r.ver.logger = r.now, r.Log
	r.ckpt = &checkpointer{log: r.st.Log, tree: r.tree, com: r.com, cfg: r.config, now: r.now, met: r.met,
		logger: r.Log, fail: r.verifyFailed, published: r.ver.notify, wake: make(chan struct{}, 1), progress: newSignal()}
	r.ckpt.signedAt.Store(r.now().UnixNano())
	r.ret = &retention{log: r.st.Log, db: r.st.RegDB, tree: r.tree, com: r.com, through: r.ver.Through,
		cfg: r.config, now: r.now, met: r.met, logger: r.Log}
}

// verifyTail is Start step 2: the versions from the last checkpoint's size
// − 1 to HEAD get every deep-verifier check, and the checkpoint its
// signature and root check. It reports whether all passed.
func (r *Role) verifyTail() bool {
	h := r.com.Head()
	if h == nil { // a replicated registry before its init entry: nothing to verify
		return true
	}
	log, head := r.st.Log, h.Version
	from := max(r.tree.Size(), 1) - 1
	from = max(from, log.MinIndex())
	prev := r.anchorLink(from)
	ok := true
	for v := from; v <= head; v++ {
		rec, err := log.Read(v)
		var m *mismatch
		if err != nil {
			prev, m = nil, readFailure(v, err)
			if m == nil {
				m = mismatchf(v, checkCRC, "unreadable: %v", err)
			}
		} else {
			prev, m = checkRecord(v, rec.Artifact, prev, r.tree)
		}
		if m != nil {
			r.verifyFailed(m)
			ok = false
		}
	}
	m, err := checkCheckpoint(r.tree)
	if m == nil && err != nil {
		m = mismatchf(r.tree.Size(), checkRoot, "checkpoint unreadable: %v", err)
	}
	if m != nil {
		r.verifyFailed(m)
		ok = false
	}
	return ok
}

// anchorLink is the link version from is checked against: version
// from−1's, or nil when from is the anchor (genesis or min_index) or
// from−1 is unusable.
func (r *Role) anchorLink(from uint64) *link {
	if from == 0 || from <= r.st.Log.MinIndex() {
		return nil
	}
	rec, err := r.st.Log.Read(from - 1)
	if err != nil {
		return nil
	}
	l, _ := checkRecord(from-1, rec.Artifact, nil, nil)
	return l
}

// catchUp is Start step 3: extend the tiles to HEAD and sign a checkpoint
// covering it, unless the tail failed verification (then nothing more is
// signed in this process).
func (r *Role) catchUp(ctx context.Context, tailOK bool) {
	if !tailOK {
		r.ckpt.halted.Store(true)
		return
	}
	size := r.tree.Size()
	h := r.com.Head()
	if h == nil {
		return
	}
	if _, err := regstore.ExtendTree(ctx, r.tree, r.st.Log, h.Version); err != nil {
		r.ckpt.failed(ctx, err)
		return
	}
	if r.tree.Size() > size {
		r.met.checkpoint("ok")
	}
	r.ckpt.signedAt.Store(r.now().UnixNano())
}

// verifyFailed handles a chain mismatch from the tail check, the deep
// verifier or the checkpointer: count it, log it with the version and
// check, and turn writes unready (verify_failed) until restart.
func (r *Role) verifyFailed(m *mismatch) {
	r.met.verifyFailed(m.check)
	r.met.audit(eventVerifyFailed)
	r.lastFailure.Store(&failureRecord{m: m, at: r.now()})
	msg := m.Error()
	r.lastErr.Store(&msg)
	r.Log.Error().Str("event", eventVerifyFailed).Uint64("version", m.version).Str("check", m.check).
		Str("detail", m.detail).Msg("registry chain verification failed; writes disabled (verify_failed)")
	if r.com != nil {
		r.com.SetWriteUnready(committer.ReasonVerifyFailed, true)
	}
}

// freeze turns read_only's maintenance on or off (an audit event each).
func (r *Role) freeze(on bool) {
	r.com.SetWriteUnready(committer.ReasonMaintenance, on)
	ev := eventUnfreeze
	if on {
		ev = eventFreeze
	}
	r.met.audit(ev)
	r.Log.Info().Str("event", ev).Int64("version", r.headVersion()).Msg("registry writes " + ev)
}

// registerGauges exports the role's gauges, read on every scrape.
func (r *Role) registerGauges() {
	st := r.st
	r.met.register()
	r.met.gauge("registry_checkpoint_size", func() float64 { return float64(r.tree.Size()) })
	r.met.gauge("registry_checkpoint_age_seconds", func() float64 { return r.ckpt.age().Seconds() })
	r.met.gauge("registry_min_index", func() float64 { return float64(st.Log.MinIndex()) })
	r.met.gauge("registry_storage_bytes", func() float64 { return float64(st.Bytes()) })
	r.met.gauge("registry_log_segments", func() float64 { return float64(len(st.Log.Segments())) })
	r.met.gauge("registry_verified_version", func() float64 { return float64(r.ver.Through()) })
}
