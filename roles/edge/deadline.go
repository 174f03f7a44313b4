package edge

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
)

// Request-Timeout bounds (docs/edge.md §2): decimal seconds within 0.001–3600.
const headerRequestMax = time.Hour

var requestTimeoutRE = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,9})?$`)

// requestTimeout is the handler deadline of r: def, or a shorter
// Request-Timeout. A Request-Timeout that is not decimal seconds within
// 0.001–3600, or that is repeated, is a 400.
func requestTimeout(r *http.Request, def time.Duration) (time.Duration, error) {
	vs := r.Header["Request-Timeout"]
	if len(vs) == 0 {
		return def, nil
	}
	bad := httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "Request-Timeout must be decimal seconds within 0.001–3600")
	if len(vs) > 1 || !requestTimeoutRE.MatchString(vs[0]) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(vs[0], 64)
	d := time.Duration(f * float64(time.Second))
	if err != nil || d < httpx.MinRequestTimeout || d > headerRequestMax {
		return 0, bad
	}
	return min(d, def), nil
}

// firstByteCtx is a request context whose deadline bounds the time to the
// first byte only: it ends at the deadline unless the response was
// committed by then (or when its parent ends, or at stop). Deadline always
// reports the deadline, so queued work can see the client's; after the
// commit the writes' own pacing (chunkWriter) bounds the response instead.
//
// It is lazy: the cancelable context and the deadline's timer are made
// only when someone asks for Done (a wait, a child context), so a request
// answered without waiting (a cache hit) costs neither. Until then Err and
// Value compute the same outcome from the clock, the commit flag and the
// parent.
type firstByteCtx struct {
	parent    context.Context
	deadline  time.Time
	committed *atomic.Bool

	inner   atomic.Pointer[innerCtx] // set once armed, never changed after
	stopped atomic.Bool

	mu    sync.Mutex  // arming and stopping
	timer *time.Timer // the deadline's, once armed (under mu)
}

// innerCtx is the cancelable context behind an armed firstByteCtx.
type innerCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// init sets c up to end d from now (or at parent's earlier deadline)
// unless committed reports true by then.
func (c *firstByteCtx) init(parent context.Context, d time.Duration, committed *atomic.Bool) {
	deadline := time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	c.parent, c.deadline, c.committed = parent, deadline, committed
}

// Deadline implements context.Context.
func (c *firstByteCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Done implements context.Context; it arms c.
func (c *firstByteCtx) Done() <-chan struct{} { return c.arm().ctx.Done() }

// Err implements context.Context: context.DeadlineExceeded when the
// first-byte deadline passed before the commit, context.Canceled after
// stop, else the parent's error.
func (c *firstByteCtx) Err() error {
	in := c.inner.Load()
	if in == nil {
		if err := c.parent.Err(); err != nil {
			return err
		}
		if !c.ended() {
			return nil
		}
		in = c.arm()
	}
	err := in.ctx.Err()
	if err != nil && errors.Is(context.Cause(in.ctx), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// Value implements context.Context. The context package looks up its own
// cancelation state with an *int key (context.Cause does): for it an ended
// context is armed first, so Cause agrees with Err. Other keys go to the
// parent without consulting the clock.
func (c *firstByteCtx) Value(key any) any {
	in := c.inner.Load()
	if _, internal := key.(*int); internal && in == nil && c.ended() {
		in = c.arm()
	}
	if in != nil {
		return in.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// ended reports, for an unarmed c, whether it has ended by itself: stopped,
// or past the deadline with nothing committed.
func (c *firstByteCtx) ended() bool {
	return c.stopped.Load() || !c.committed.Load() && !time.Now().Before(c.deadline)
}

// arm makes the cancelable context: already canceled when c was stopped or
// its deadline passed uncommitted, else with a timer for the deadline.
func (c *firstByteCtx) arm() *innerCtx {
	if in := c.inner.Load(); in != nil {
		return in
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in
	}
	ctx, cancel := context.WithCancelCause(c.parent)
	in := &innerCtx{ctx: ctx, cancel: cancel}
	c.inner.Store(in)
	switch {
	case c.stopped.Load():
		cancel(context.Canceled)
	case !time.Now().Before(c.deadline):
		c.fire()
	default:
		c.timer = time.AfterFunc(time.Until(c.deadline), c.fire)
	}
	return in
}

// fire ends an armed c at its deadline unless the response was committed.
func (c *firstByteCtx) fire() {
	if !c.committed.Load() {
		c.inner.Load().cancel(context.DeadlineExceeded)
	}
}

// stop ends c (the handler returned): its timer is stopped and it reports
// context.Canceled from now on.
func (c *firstByteCtx) stop() {
	c.mu.Lock()
	c.stopped.Store(true)
	t, in := c.timer, c.inner.Load()
	c.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if in != nil {
		in.cancel(context.Canceled)
	}
}
