package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// runner holds the clock of one run: warm-up from t0 to start, measured
// part from start to end.
type runner struct {
	cfg   config
	t0    time.Time
	start time.Time
	end   time.Time
}

// load runs every class of cfg against its round tripper (rts[i] serves
// cfg.classes[i]) and returns their stats. Requests sent in time run to
// their end or cfg.timeout, so none is cut short by the end of the run;
// ctx ending (a signal) cancels everything and the cancelled requests are
// not counted. Every goroutine has returned when load does.
func load(ctx context.Context, cfg config, rts []http.RoundTripper) []*stats {
	t0 := time.Now()
	r := &runner{cfg: cfg, t0: t0, start: t0.Add(cfg.warmup), end: t0.Add(cfg.warmup + cfg.duration)}
	st := make([]*stats, len(cfg.classes))
	var classes sync.WaitGroup
	for i, c := range cfg.classes {
		st[i] = newStats(cfg.duration, cfg.window)
		hc := newClient(rts[i])
		classes.Go(func() { // class i's sender or workers
			if cfg.open() {
				r.openClass(ctx, c, hc, st[i])
			} else {
				r.closedClass(ctx, c, hc, st[i])
			}
		})
	}
	classes.Wait()
	return st
}

// openClass sends c's requests at fixed intervals (request i is scheduled
// at t0 + i/rate) until end, each on its own goroutine, at most
// cfg.outstanding(c) at once: a scheduled send that finds them all busy is
// dropped and counted. A sender that wakes late sends what is due at once;
// latency still counts from each request's scheduled time.
func (r *runner) openClass(ctx context.Context, c classSpec, hc *http.Client, st *stats) {
	slots := make(chan struct{}, r.cfg.outstanding(c))
	var inflight sync.WaitGroup
	defer inflight.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := 0; ; i++ {
		sched := r.t0.Add(time.Duration(float64(i) * float64(time.Second) / c.rate))
		if !sched.Before(r.end) {
			return
		}
		if d := time.Until(sched); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		at := sched.Sub(r.start)
		select {
		case slots <- struct{}{}:
			st.sendOutcome(at, time.Since(sched), false)
			inflight.Go(func() { // one request, bounded by slots
				defer func() { <-slots }()
				if o, ok := r.do(ctx, hc, c, sched, at); ok {
					st.add(o)
				}
			})
		default:
			st.sendOutcome(at, time.Since(sched), true)
		}
	}
}

// closedClass runs cfg.closed workers that each send c's requests one
// after another while the run lasts.
func (r *runner) closedClass(ctx context.Context, c classSpec, hc *http.Client, st *stats) {
	var workers sync.WaitGroup
	for range r.cfg.closed {
		workers.Go(func() { // one closed-loop worker
			for ctx.Err() == nil {
				now := time.Now()
				if !now.Before(r.end) {
					return
				}
				at := now.Sub(r.start)
				st.sendOutcome(at, 0, false)
				o, ok := r.do(ctx, hc, c, now, at)
				if !ok {
					return
				}
				st.add(o)
			}
		})
	}
	workers.Wait()
}

// do sends one request of c under cfg.timeout and reads its body; the
// latency runs from sched to the end of the body. ok is false when ctx
// ended (the outcome is then not counted).
func (r *runner) do(ctx context.Context, hc *http.Client, c classSpec, sched time.Time, at time.Duration) (outcome, bool) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	o := outcome{at: at}
	req, err := http.NewRequestWithContext(rctx, c.method, c.url, nil)
	if err == nil {
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		var resp *http.Response
		if resp, err = hc.Do(req); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			o.status, o.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After") != ""
		}
	}
	o.lat = time.Since(sched)
	switch {
	case err == nil:
		return o, true
	case ctx.Err() != nil:
		return o, false
	case rctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		o.kind = errTimeout
	default:
		o.kind = errConn
	}
	o.status, o.err = 0, err.Error()
	return o, true
}

// newClient wraps rt in a client that does not follow redirects.
func newClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// newTransport returns a transport for one class that keeps up to idle
// connections per host open between requests (so that a steady load does
// not churn connections) and never proxies or compresses.
func newTransport(idle int) *http.Transport {
	return client.NewTransport(client.TransportOptions{Base: client.BaseBare, DialTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: idle, IdleConnTimeout: 90 * time.Second, DisableCompression: true})
}
