package tenant

import (
	"errors"
	"fmt"
	"math"
)

// MaxWeight bounds Params.Weight (docs/gateway.md §3.5).
const MaxWeight = 1000

// ErrParams reports invalid Params.
var ErrParams = errors.New("tenant: invalid params")

// Params are one tenant's admission parameters. RPS 0 means suspended;
// Burst 0 means ceil(RPS); Weight is the DRR weight (1–MaxWeight);
// MaxBytesPerS 0 means no byte quota.
type Params struct {
	RPS          float64
	Burst        int
	Weight       int
	MaxBytesPerS int64
}

// ParamsFunc returns the parameters of a tenant (config, registry or the
// tenant_* / anon_* defaults). It must be fast and must not block.
type ParamsFunc func(ID) Params

// Validate returns ErrParams (wrapped) unless RPS is finite and ≥ 0, Burst and
// MaxBytesPerS are ≥ 0 and Weight is within 1–MaxWeight.
func (p Params) Validate() error {
	switch {
	case p.RPS < 0 || math.IsNaN(p.RPS) || math.IsInf(p.RPS, 0):
		return fmt.Errorf("%w: rps %v", ErrParams, p.RPS)
	case p.Burst < 0:
		return fmt.Errorf("%w: burst %d", ErrParams, p.Burst)
	case p.Weight < 1 || p.Weight > MaxWeight:
		return fmt.Errorf("%w: weight %d", ErrParams, p.Weight)
	case p.MaxBytesPerS < 0:
		return fmt.Errorf("%w: max_bytes_per_s %d", ErrParams, p.MaxBytesPerS)
	}
	return nil
}

// Suspended reports whether the tenant is suspended (RPS 0).
func (p Params) Suspended() bool { return p.RPS == 0 }

// maxAutoBurst caps the burst derived from a huge RPS.
const maxAutoBurst = 1 << 30

// EffectiveBurst returns Burst, or ceil(RPS) when Burst is 0 (at least 1, at
// most 2^30).
func (p Params) EffectiveBurst() int {
	if p.Burst > 0 {
		return p.Burst
	}
	if !(p.RPS < maxAutoBurst) {
		return maxAutoBurst
	}
	return max(1, int(math.Ceil(p.RPS)))
}
