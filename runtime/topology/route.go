package topology

// Route is a reader's way to one role, decided once by Find: either one
// fixed value (the role in this process, or at the configured URL) or a
// Pool of values, one per alive member running the role. A nil *Route is
// a role the reader has no way to (Find said Nowhere).
type Route[T any] struct {
	fixed T
	url   func() string // the fixed value's base URL; nil: ""
	pool  *Pool[T]
}

// FixedRoute is the route of a role in this process or at a configured
// URL: Ranked always answers v. url, when not nil, is asked for v's base
// URL on every Ranked (a co-located role's address is known only once it
// listens).
func FixedRoute[T any](v T, url func() string) *Route[T] { return &Route[T]{fixed: v, url: url} }

// PoolRoute is the route of a role served by cluster members.
func PoolRoute[T any](p *Pool[T]) *Route[T] { return &Route[T]{pool: p} }

// Ranked returns the values to try for key, best first: the fixed value,
// or the pool's members in Ranked(key) order (none when no member is alive
// now, or for a nil route).
func (r *Route[T]) Ranked(key []byte) []Entry[T] {
	switch {
	case r == nil:
		return nil
	case r.pool != nil:
		return r.pool.Ranked(key)
	}
	e := Entry[T]{Value: r.fixed}
	if r.url != nil {
		e.URL = r.url()
	}
	return []Entry[T]{e}
}

// Pool returns the members' pool; nil for a fixed or nil route.
func (r *Route[T]) Pool() *Pool[T] {
	if r == nil {
		return nil
	}
	return r.pool
}

// Fixed returns the fixed value; ok is false for a pool or nil route.
func (r *Route[T]) Fixed() (v T, ok bool) {
	if r == nil || r.pool != nil {
		return v, false
	}
	return r.fixed, true
}
