package edge

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
	r.Server().SetLimits(n.Ingress.Limits())
	return nil
}
