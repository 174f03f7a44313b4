package sites

import (
	"context"
	"errors"

	"golang.org/x/sync/singleflight"
)

// flight collapses concurrent calls with one key into one call made in the
// first caller's goroutine (singleflight.Do: nothing is spawned). The call
// runs under the first caller's context; if that context ends and so fails
// the call, a follower whose own context is still live tries again, at most
// flightTries times in all, so one disconnecting client cannot fail others.
// A follower waits at most as long as the leader's context allows.
type flight[T any] struct {
	g singleflight.Group
}

const flightTries = 3

// leaderGone marks an error of a call whose (leader's) context had ended.
type leaderGone struct{ err error }

func (l leaderGone) Error() string { return l.err.Error() }
func (l leaderGone) Unwrap() error { return l.err }

func (f *flight[T]) do(ctx context.Context, key string, fn func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for range flightTries {
		var shared bool
		v, shared, err = f.call(ctx, key, fn)
		var lg leaderGone
		if !errors.As(err, &lg) {
			return v, err
		}
		err = lg.err
		if !shared || ctx.Err() != nil {
			return v, err
		}
	}
	return v, err
}

func (f *flight[T]) call(ctx context.Context, key string, fn func() (T, error)) (T, bool, error) {
	r, err, shared := f.g.Do(key, func() (any, error) {
		v, err := fn()
		if err != nil && ctx.Err() != nil {
			err = leaderGone{err: err}
		}
		return v, err
	})
	v, _ := r.(T)
	return v, shared, err
}
