package hedge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/runtime"
)

const ms = time.Millisecond

// run calls Lookup and returns its outputs and the elapsed fake time.
func run(ctx context.Context, fs []*fake, opt Options) (string, Result, time.Duration, error) {
	start := time.Now()
	v, res, err := Lookup(ctx, peers(fs...), hit, opt)
	return v, res, time.Since(start), err
}

func TestFirstWaveOnlyWhenFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "a", steps: after(50*ms, "hit")}, {name: "b", steps: hang()},
			{name: "c", steps: after(100*ms, "hit")}, {name: "d", steps: hang()}, {name: "e", steps: hang()}}
		v, res, el, err := run(t.Context(), fs, Options{})
		if err != nil || v != "hit" || el != 50*ms {
			t.Fatalf("got %q %v after %v, want hit at 50ms", v, err, el)
		}
		want := Result{Winner: "a", Asked: 3, Elapsed: 50 * ms}
		if res != want {
			t.Fatalf("result %+v, want %+v", res, want)
		}
		if fs[3].calls()+fs[4].calls() != 0 {
			t.Fatal("β peers were asked although the first wave answered before hedge_ms")
		}
	})
}

func TestHedgeFiresExactlyAtHedgeAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		fs := []*fake{{name: "a", steps: hang()}, {name: "b", steps: hang()}, {name: "c", steps: hang()},
			{name: "d", steps: after(10*ms, "hit")}, {name: "e", steps: hang()}, {name: "f", steps: hang()}}
		_, res, el, err := run(t.Context(), fs, Options{})
		if err != nil || res.Winner != "d" || !res.Hedged || res.Asked != 5 || el != 160*ms {
			t.Fatalf("got %+v %v after %v, want d winning hedged at 160ms with 5 asked", res, err, el)
		}
		for _, f := range fs[3:5] {
			if got := f.startedAt(0).Sub(t0); got != DefaultHedgeAfter {
				t.Errorf("%s started at %v, want %v", f.name, got, DefaultHedgeAfter)
			}
		}
		if fs[5].calls() != 0 {
			t.Error("more than α+β peers asked")
		}
	})
}

func TestHedgeAtOnceWhenFirstWaveFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		fs := []*fake{{name: "a", steps: failAfter(10*ms, err400)}, {name: "b", steps: failAfter(20*ms, err400)},
			{name: "c", steps: after(30*ms, "empty")}, {name: "d", steps: after(5*ms, "hit")}, {name: "e", steps: hang()}}
		_, res, el, err := run(t.Context(), fs, Options{})
		if err != nil || res.Winner != "d" || el != 35*ms {
			t.Fatalf("got %+v %v after %v, want d at 35ms", res, err, el)
		}
		if got := fs[3].startedAt(0).Sub(t0); got != 30*ms {
			t.Fatalf("β started at %v, want 30ms (when the last α leg finished)", got)
		}
	})
}

func TestWinnerCancelsLosersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		fs := []*fake{{name: "a", steps: hang()}, {name: "b", steps: after(400*ms, "empty")},
			{name: "c", steps: hang()}, {name: "d", steps: after(200*ms, "hit")}, {name: "e", steps: hang()}}
		_, res, el, err := run(t.Context(), fs, Options{})
		if err != nil || res.Winner != "d" || el != 350*ms {
			t.Fatalf("got %+v %v after %v, want d at 350ms", res, err, el)
		}
		for _, f := range []*fake{fs[0], fs[1], fs[2], fs[4]} {
			at, running, cause := f.ended()
			if at.Sub(t0) != 350*ms || cause != ErrLost || running != 0 {
				t.Errorf("%s: saw ctx end at %v with cause %v, %d running; want 350ms, ErrLost, 0",
					f.name, at.Sub(t0), cause, running)
			}
		}
	})
}

func TestDeadlineRespectedExactly(t *testing.T) {
	cases := []struct {
		name string
		opt  Options
		want time.Duration
	}{
		{"default", Options{}, DefaultDeadline},
		{"configured", Options{Deadline: 400 * ms}, 400 * ms},
		{"shorter than hedge", Options{Deadline: 100 * ms}, 100 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fs := []*fake{{name: "a", steps: hang()}, {name: "b", steps: after(10*ms, "empty")},
					{name: "c", steps: failAfter(0, err503)}, {name: "d", steps: hang()}}
				_, _, el, err := run(t.Context(), fs, c.opt)
				if !errors.Is(err, ErrTimeout) || el != c.want {
					t.Fatalf("got %v after %v, want ErrTimeout at %v", err, el, c.want)
				}
			})
		})
	}
}

func TestCallerContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "a", steps: hang()}}
		ctx, cancel := context.WithTimeout(t.Context(), 300*ms)
		defer cancel()
		_, _, el, err := run(ctx, fs, Options{})
		if !errors.Is(err, ErrTimeout) || el != 300*ms {
			t.Fatalf("caller deadline: got %v after %v", err, el)
		}
		ctx, cancel = context.WithCancel(t.Context())
		time.AfterFunc(70*ms, cancel)
		_, _, el, err = run(ctx, []*fake{{name: "a", steps: hang()}}, Options{})
		if !errors.Is(err, context.Canceled) || el != 70*ms {
			t.Fatalf("caller cancel: got %v after %v", err, el)
		}
	})
}

func TestTransientRetriedWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		a := &fake{name: "a", steps: []step{{d: 10 * ms, err: err503}, {d: 10 * ms, err: fmt.Errorf("read: %w", io.EOF)},
			{d: 10 * ms, err: fmt.Errorf("read: %w", syscall.ECONNRESET)}, {d: 10 * ms, v: "hit"}}}
		opt := Options{Alpha: 1, Beta: -1, RetryPauseMin: 75 * ms, RetryPauseMax: 75 * ms, Metrics: m, Role: "index"}
		_, res, el, err := run(t.Context(), []*fake{a}, opt)
		if err != nil || res.Winner != "a" || res.Retries != 3 || a.calls() != 4 || el != 4*10*ms+3*75*ms {
			t.Fatalf("got %+v %v after %v with %d calls", res, err, el, a.calls())
		}
		if got := m.Values()[`ron_backoff_retries_total{role="index",op="peer_lookup"}`]; got != 3 {
			t.Fatalf("retries metric %v, want 3", got)
		}
	})
}

func TestRetriesStopAtLimitAndBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &fake{name: "a", steps: failAfter(10*ms, err503)}
		opt := Options{Alpha: 1, Beta: -1, RetryPauseMin: 50 * ms, RetryPauseMax: 50 * ms}
		_, _, el, err := run(t.Context(), []*fake{a}, opt)
		if !errors.Is(err, ErrUnavailable) || a.calls() != 4 || el != 4*10*ms+3*50*ms {
			t.Fatalf("limit: got %v after %v with %d calls, want 4 calls", err, el, a.calls())
		}
		// Budget 300ms, 100ms pauses: retry 1 starts at 150ms (150ms left),
		// retry 2 would start at 300ms with nothing left: not made.
		b := &fake{name: "b", steps: failAfter(50*ms, err503)}
		opt = Options{Alpha: 1, Beta: -1, Deadline: 300 * ms, RetryPauseMin: 100 * ms, RetryPauseMax: 100 * ms}
		_, _, el, err = run(t.Context(), []*fake{b}, opt)
		if !errors.Is(err, ErrUnavailable) || b.calls() != 2 || el != 200*ms {
			t.Fatalf("budget: got %v after %v with %d calls, want unavailable at 200ms after 2 calls", err, el, b.calls())
		}
	})
}

func TestPermanentNotRetried(t *testing.T) {
	for _, perm := range []error{err429, err400, fmt.Errorf("%w: bad key", ErrInvalidAnswer)} {
		synctest.Test(t, func(t *testing.T) {
			a := &fake{name: "a", steps: failAfter(10*ms, perm)}
			_, res, el, err := run(t.Context(), []*fake{a}, Options{})
			if !errors.Is(err, ErrUnavailable) || a.calls() != 1 || res.Retries != 0 || el != 10*ms {
				t.Fatalf("%v: got %v after %v with %d calls", perm, err, el, a.calls())
			}
		})
	}
}

func TestAllNotFoundAfterAllAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "a", steps: failAfter(10*ms, err404)}, {name: "b", steps: after(20*ms, "empty")},
			{name: "c", steps: failAfter(30*ms, ErrNotFound)}, {name: "d", steps: failAfter(10*ms, err503)},
			{name: "e", steps: after(500*ms, "stale")}}
		v, res, el, err := run(t.Context(), fs, Options{Retries: -1})
		if !errors.Is(err, ErrNotFound) || v != "empty" || el != 530*ms {
			t.Fatalf("got %q %v after %v, want the first unsatisfied answer with ErrNotFound at 530ms", v, err, el)
		}
		if res.Asked != 5 || !res.Hedged || res.Winner != "" {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestAllPeersFailingNamesThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "p1", steps: failAfter(10*ms, err400)}, {name: "p2", steps: failAfter(20*ms, err429)},
			{name: "p3", steps: failAfter(0, errors.New("bad gateway"))}, {name: "p4", down: true}}
		_, res, _, err := run(t.Context(), fs, Options{})
		var ue *UnavailableError
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || len(ue.Peers) != 4 || res.Skipped != 1 {
			t.Fatalf("got %v, %+v", err, res)
		}
		for _, name := range []string{"p1", "p2", "p3", "p4"} {
			if !strings.Contains(err.Error(), name+": ") {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
	})
}

func TestNoPeers(t *testing.T) {
	_, res, err := Lookup(t.Context(), nil, hit, Options{})
	if !errors.Is(err, ErrUnavailable) || res.Asked != 0 || !strings.Contains(err.Error(), "no peers") {
		t.Fatalf("got %v %+v", err, res)
	}
}

func TestAlphaLargerThanPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "a", steps: failAfter(300*ms, err404)}, {name: "b", steps: after(400*ms, "empty")}}
		_, res, el, err := run(t.Context(), fs, Options{Alpha: 5})
		if !errors.Is(err, ErrNotFound) || res.Asked != 2 || res.Hedged || el != 400*ms {
			t.Fatalf("got %+v %v after %v", res, err, el)
		}
	})
}

func TestSkippedPeerGivesUpItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		fs := []*fake{{name: "down", down: true}, {name: "a", steps: hang()}, {name: "b", steps: hang()},
			{name: "c", steps: after(20*ms, "hit")}, {name: "d", steps: hang()}}
		_, res, _, err := run(t.Context(), fs, Options{Metrics: m, Role: "index"})
		if err != nil || res.Winner != "c" || res.Skipped != 1 || res.Asked != 3 || fs[0].calls() != 0 {
			t.Fatalf("got %+v %v", res, err)
		}
		vals := m.Values()
		for series, want := range map[string]float64{
			`ron_index_peer_requests_total{role="index",result="skipped",target="down"}`: 1,
			`ron_index_peer_requests_total{role="index",result="ok",target="c"}`:         1,
			`ron_index_peer_requests_total{role="index",result="canceled",target="a"}`:   1,
			`ron_tasks_canceled_total{role="index",kind="lookup_leg"}`:                   2,
			`ron_dht_hedged_requests_total{role="index",result="alpha"}`:                 1,
		} {
			if vals[series] != want {
				t.Errorf("%s = %v, want %v", series, vals[series], want)
			}
		}
	})
}

func TestHedgeMetricResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runtime.NewMetrics(nil)
		opt := Options{Alpha: 1, Beta: 1, Metrics: m, Role: "index"}
		run(t.Context(), []*fake{{name: "a", steps: hang()}, {name: "b", steps: after(1*ms, "hit")}}, opt)
		run(t.Context(), []*fake{{name: "a", steps: hang()}}, opt)
		vals := m.Values()
		if vals[`ron_dht_hedged_requests_total{role="index",result="beta"}`] != 1 ||
			vals[`ron_dht_hedged_requests_total{role="index",result="none"}`] != 1 ||
			vals[`ron_io_timeouts_total{role="index",op="peer_lookup"}`] != 1 {
			t.Fatalf("metrics %v", vals)
		}
	})
}

// TestMetricsWithoutRoleAreRefused: options with Metrics but no Role are a
// wiring mistake; Lookup refuses them before asking any peer.
func TestMetricsWithoutRoleAreRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := []*fake{{name: "a", steps: after(ms, "hit")}}
		_, _, _, err := run(t.Context(), fs, Options{Metrics: runtime.NewMetrics(nil)})
		if !errors.Is(err, errNoRole) || fs[0].calls() != 0 {
			t.Fatalf("Lookup with Metrics and no Role = %v after %d calls", err, fs[0].calls())
		}
	})
}
