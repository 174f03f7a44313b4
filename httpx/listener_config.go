package httpx

// Ingress holds the three ingress keys every listener section has
// (docs/architecture.md §5). It is squashed into each section's config struct.
type Ingress struct {
	MaxInflight   int     `koanf:"max_inflight" help:"requests in flight on this listener; over → 429 busy"`
	RPS           float64 `koanf:"rps" help:"requests per second on this listener; 0 = off, over-rate → 429 rate_limited"`
	MaxConnsPerIP int     `koanf:"max_conns_per_ip" help:"open connections per client IP; over → 429 busy"`
}

// DefaultIngress are the defaults of every listener but the gateway's.
func DefaultIngress() Ingress { return Ingress{MaxInflight: 512, MaxConnsPerIP: 256} }

// Limits converts the config keys to the server's limits.
func (i Ingress) Limits() Limits {
	return Limits(i)
}
