package edge

import "fmt"

// CheckApply reports whether Apply would accept cfg: an edge Config that
// validates, with listen, storage_url, index_url, fill_workers and
// fill_queue_cap unchanged (§10: not live, rejected by name).
func (r *Role) CheckApply(cfg any) error {
	n, ok := cfg.(Config)
	if !ok {
		return fmt.Errorf("apply got %T", cfg)
	}
	if err := r.validate(n); err != nil {
		return err
	}
	if keys := r.cfg.Load().restartOnly(n); len(keys) > 0 {
		return fmt.Errorf("these keys need a restart: %v", keys)
	}
	return nil
}

// Apply hot-reloads every other key (§10): origins, pack sources and
// checks, cache budgets (shrinking evicts at once), limits, timeouts,
// CORS, tokens and tile settings.
func (r *Role) Apply(cfg any) error {
	if err := r.CheckApply(cfg); err != nil {
		return err
	}
	n := cfg.(Config)
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	old := *r.cfg.Load()
	r.cfg.Store(&n)
	if !r.started.Load() {
		return nil // not started: Start reads the new config
	}
	return r.reconfigure(old, n)
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
	r.server.SetLimits(serverLimits(n))
	r.setRate(old.RPS, n.RPS)
	return nil
}
