package edge

import "github.com/ronhq/ron/runtime"

// CheckApply reports whether Apply would accept cfg: an edge Config that
// validates, with listen, storage_url, index_url, fill_workers and
// fill_queue_cap unchanged (docs/edge.md §10: not live, rejected by name).
func (r *Role) CheckApply(cfg any) error {
	_, err := r.reconfig().Check(cfg)
	return err
}

// Apply hot-reloads every other key (docs/edge.md §10): origins, pack sources and
// checks, cache budgets (shrinking evicts at once), limits, timeouts,
// CORS, tokens and tile settings. Before Start it only stores cfg.
func (r *Role) Apply(cfg any) error { return r.reconfig().Apply(cfg) }

// reconfig is the role's reload sequence (runtime.Reconfig).
func (r *Role) reconfig() *runtime.Reconfig[Config] {
	return &runtime.Reconfig[Config]{Role: roleName, Config: r.cfg, Lock: &r.applyMu, Validate: r.validate,
		RestartOnly: Config.restartOnly, Running: r.started.Load, Reconfigure: r.reconfigure}
}

// reconfigure applies a validated config to the running role.
func (r *Role) reconfigure(old, n Config) error {
	s, err := newSettings(n)
	if err != nil {
		return err
	}
	r.set.Store(s) // objects, tiles, CORS, deadlines and tokens read it per request
	r.live.Apply(s.live)
	r.packs.Apply(r.packOptions(n))
	r.cache.SetLimits(n.cacheBudget(r.opt.Amnesia), n.MaxVariants)
	r.server.SetLimits(n.Ingress.Limits())
	return nil
}
