package tenant

import (
	"container/list"
	"errors"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"golang.org/x/time/rate"
)

// Options configure States.
type Options struct {
	// MaxStates bounds the number of tenant states held (≥ 1).
	MaxStates int
	// Params gives each tenant's parameters (required).
	Params ParamsFunc
	// Now is the clock; nil means time.Now (the fake clock inside a
	// testing/synctest bubble).
	Now func() time.Time
}

// ErrOptions reports invalid Options.
var ErrOptions = errors.New("tenant: invalid options")

// State is one tenant's admission state. It stays in its States while any
// caller holds it (between Acquire and Release).
type State struct {
	id     ID
	lim    *rate.Limiter
	bytes  atomic.Pointer[rate.Limiter] // byte bucket; nil = no byte quota
	params atomic.Pointer[Params]

	elem *list.Element // guarded by States.mu
	busy int           // holders; guarded by States.mu
}

// ID returns the tenant.
func (st *State) ID() ID { return st.id }

// Params returns the tenant's current parameters.
func (st *State) Params() Params { return *st.params.Load() }

// States is the bounded map of per-tenant state (docs/gateway.md §3.3). Only
// idle entries (no holder) are evicted, least recently acquired first; an
// evicted tenant comes back with a full bucket. Safe for concurrent use; its
// mutex guards only memory and the Params callback.
type States struct {
	max int
	now func() time.Time

	mu     sync.Mutex
	params ParamsFunc
	byID   map[ID]*State
	order  *list.List // of *State, most recently acquired at the front
}

// NewStates returns an empty States, or ErrOptions.
func NewStates(opt Options) (*States, error) {
	if opt.MaxStates < 1 || opt.Params == nil {
		return nil, ErrOptions
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &States{max: opt.MaxStates, now: opt.Now, params: opt.Params,
		byID: make(map[ID]*State), order: list.New()}, nil
}

// Acquire returns id's state, creating it (full bucket) when absent, and
// counts the caller as a holder (in flight or queued) until Release. When the
// map is full and every entry is held it returns 503 busy
// (details.limit "tenant_states").
func (s *States) Acquire(id ID) (*State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byID[id]
	if !ok {
		if len(s.byID) >= s.max && !s.evictIdle() {
			return nil, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeBusy,
				"too many active tenants").WithDetails(map[string]any{"limit": "tenant_states"})
		}
		st = s.create(id)
	}
	s.order.MoveToFront(st.elem)
	st.busy++
	return st, nil
}

// Release ends one holder's use of st (from Acquire). Extra calls are ignored.
func (s *States) Release(st *State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.busy > 0 {
		st.busy--
	}
}

// create adds a state for id; s.mu must be held.
func (s *States) create(id ID) *State {
	p := s.params(id)
	burst := 1
	if p.Validate() == nil {
		burst = p.EffectiveBurst()
	}
	st := &State{id: id, lim: rate.NewLimiter(rate.Limit(p.RPS), burst)}
	st.params.Store(&p)
	st.setByteQuota(s.now(), p)
	st.elem = s.order.PushFront(st)
	s.byID[id] = st
	return st
}

// evictIdle removes the least recently acquired idle state; s.mu must be
// held. It reports whether one was removed.
func (s *States) evictIdle() bool {
	for e := s.order.Back(); e != nil; e = e.Prev() {
		st := e.Value.(*State)
		if st.busy == 0 {
			s.order.Remove(e)
			delete(s.byID, st.id)
			return true
		}
	}
	return false
}

// SetParams replaces the parameters callback and applies it at once to every
// held state (rate and burst change live; tokens already earned are kept up
// to the new burst). Byte buckets follow the same rule; a byte quota turned
// on starts full and one turned off is dropped.
func (s *States) SetParams(fn ParamsFunc) error {
	if fn == nil {
		return ErrOptions
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params = fn
	for id, st := range s.byID {
		p := fn(id)
		st.params.Store(&p)
		if p.Validate() == nil {
			st.lim.SetLimitAt(now, rate.Limit(p.RPS))
			st.lim.SetBurstAt(now, p.EffectiveBurst())
		}
		st.setByteQuota(now, p)
	}
	return nil
}

// Len returns the number of states held.
func (s *States) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// Allow takes one request token from st's bucket (docs/gateway.md §3.4).
// Errors: 403 forbidden (details.reason "tenant_suspended") when RPS is 0;
// 429 rate_limited (details.limit "tenant_rps") with Retry-After = seconds to
// the next token rounded up (≥ 1) when the bucket is empty; 500 internal when
// the tenant's parameters are invalid.
func (s *States) Allow(st *State) error {
	p := st.Params()
	if err := p.Validate(); err != nil {
		return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "invalid tenant parameters")
	}
	if p.Suspended() {
		return httpx.NewError(http.StatusForbidden, httpx.CodeForbidden, "tenant suspended").
			WithDetails(map[string]any{"reason": "tenant_suspended"})
	}
	now := s.now()
	if st.lim.AllowN(now, 1) {
		return nil
	}
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeRateLimited, "tenant rate limit").
		WithRetryAfter(retrySeconds(st.lim, now)).WithDetails(map[string]any{"limit": "tenant_rps"})
}

// retrySeconds is the time until lim holds one token, in whole seconds
// rounded up, at least 1.
func retrySeconds(lim *rate.Limiter, now time.Time) int {
	missing := 1 - lim.TokensAt(now)
	secs := math.Ceil(missing / float64(lim.Limit()))
	if !(secs < math.MaxInt32) {
		return math.MaxInt32
	}
	return max(1, int(secs))
}
