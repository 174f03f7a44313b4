// Package ratelimit holds keyed token buckets: one golang.org/x/time/rate
// limiter per key (a client IP for the index's per-IP bucket, a tenant for
// the gateway), kept in a bounded LRU so that memory stays bounded however
// many keys are seen. A key pushed out of the LRU starts again with a full
// bucket when it comes back.
package ratelimit

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// DefaultMaxKeys bounds the number of buckets when Options.MaxKeys is 0.
const DefaultMaxKeys = 65536

// ErrConfig reports invalid Options: a rate that is negative, NaN or
// infinite, a burst below 1, or a negative MaxKeys.
var ErrConfig = errors.New("ratelimit: invalid options")

// Options configure a Limiter.
type Options struct {
	RPS     float64 // tokens added per second to every bucket (> 0)
	Burst   int     // bucket size (≥ 1)
	MaxKeys int     // buckets kept; 0 means DefaultMaxKeys
	// Now is the clock; nil means time.Now (the fake clock inside a
	// testing/synctest bubble).
	Now func() time.Time
}

func (o Options) check() (Options, error) {
	if o.RPS <= 0 || math.IsNaN(o.RPS) || math.IsInf(o.RPS, 0) || o.Burst < 1 || o.MaxKeys < 0 {
		return o, ErrConfig
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Limiter is a set of token buckets keyed by string. Safe for concurrent
// use; its mutex guards only the in-memory LRU.
type Limiter struct {
	now func() time.Time

	mu    sync.Mutex
	lru   *simplelru.LRU[string, *rate.Limiter]
	rps   rate.Limit
	burst int
}

// New returns a Limiter, or ErrConfig.
func New(opt Options) (*Limiter, error) {
	opt, err := opt.check()
	if err != nil {
		return nil, err
	}
	lru, err := simplelru.NewLRU[string, *rate.Limiter](opt.MaxKeys, nil)
	if err != nil {
		return nil, err
	}
	return &Limiter{now: opt.Now, lru: lru, rps: rate.Limit(opt.RPS), burst: opt.Burst}, nil
}

// Allow takes one token from key's bucket. When the bucket is empty it
// returns false and how long until a token is available (at least 1 ns).
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	now := l.now()
	b := l.bucket(key)
	if b.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.TokensAt(now)
	wait := time.Duration(math.Ceil(missing / float64(b.Limit()) * float64(time.Second)))
	return false, max(wait, 1)
}

// bucket returns key's limiter, creating a full one when absent.
func (l *Limiter) bucket(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.lru.Get(key); ok {
		return b
	}
	b := rate.NewLimiter(l.rps, l.burst)
	l.lru.Add(key, b)
	return b
}

// SetRate changes the rate and burst of every bucket, present and future
// (hot reload). Invalid values return ErrConfig and change nothing.
func (l *Limiter) SetRate(rps float64, burst int) error {
	if _, err := (Options{RPS: rps, Burst: burst}).check(); err != nil {
		return err
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rps, l.burst = rate.Limit(rps), burst
	for _, b := range l.lru.Values() {
		b.SetLimitAt(now, l.rps)
		b.SetBurstAt(now, burst)
	}
	return nil
}

// Len returns the number of buckets held.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
