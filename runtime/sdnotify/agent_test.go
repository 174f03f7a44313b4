package sdnotify

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
)

// sent is one notification and when (bubble time) it was sent.
type sent struct {
	at  time.Duration
	msg string
}

// recorder is a fake Sender keeping every message.
type recorder struct {
	start time.Time
	fail  atomic.Bool

	mu   sync.Mutex
	msgs []sent
}

func (r *recorder) Send(ctx context.Context, msg string) error {
	if r.fail.Load() {
		return errors.New("socket gone")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, sent{at: time.Since(r.start), msg: msg})
	return nil
}

// take returns and forgets the messages so far, watchdog pings excluded
// unless withDog.
func (r *recorder) take(withDog bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.msgs {
		if withDog || s.msg != MsgWatchdog {
			out = append(out, s.msg)
		}
	}
	r.msgs = nil
	return out
}

// fixture is an Agent over a recorder, a bus and a switchable readiness.
type fixture struct {
	rec   *recorder
	bus   *runtime.Bus
	ready atomic.Bool
	agent *Agent
}

// newFixture builds and starts an Agent whose node starts ready or not;
// call it inside a synctest bubble.
func newFixture(t *testing.T, watchdog time.Duration, ready bool) *fixture {
	f := &fixture{rec: &recorder{start: time.Now()}, bus: runtime.NewBus(nil)}
	f.ready.Store(ready)
	f.agent = New(Options{Sender: f.rec, Watchdog: watchdog, Bus: f.bus, Log: zerolog.Nop(),
		Ready: func(context.Context) runtime.Readiness {
			if f.ready.Load() {
				return runtime.Readiness{}
			}
			return runtime.Readiness{Missing: []string{"storage", "edge:pack:world"}, Degraded: []string{"index"}}
		}})
	f.agent.Start()
	t.Cleanup(f.agent.Stop)
	return f
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("notifications:\n got %q\nwant %q", got, want)
	}
}

func TestReadyOnceWhenReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, false)
		synctest.Wait()
		expect(t, f.rec.take(true), "STATUS=starting; waiting for storage, edge:pack:world; degraded: index")
		time.Sleep(1100 * time.Millisecond) // polls see the same state: no new STATUS
		synctest.Wait()
		expect(t, f.rec.take(true))
		f.ready.Store(true)
		time.Sleep(200 * time.Millisecond) // the poll at 1.25 s
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")
		f.ready.Store(false)
		time.Sleep(time.Second)
		f.ready.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		expect(t, f.rec.take(true)) // READY=1 is sent once per start
	})
}

func TestReloadAroundReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, false)
		f.agent.Reloading() // before the first READY=1: nothing
		f.agent.Reloaded(2, nil)
		synctest.Wait()
		f.rec.take(true)
		f.ready.Store(true)
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")

		f.agent.Reloading()
		synctest.Wait()
		got := f.rec.take(true)
		if len(got) != 1 || !strings.HasPrefix(got[0], MsgReloading+"\nMONOTONIC_USEC=") ||
			!strings.HasSuffix(got[0], "\nSTATUS=reloading configuration") {
			t.Fatalf("reload begin: %q", got)
		}
		usec := strings.Split(got[0], "\n")[1]
		if strings.TrimPrefix(usec, "MONOTONIC_USEC=") == "0" {
			t.Fatalf("MONOTONIC_USEC not read: %q", usec)
		}
		f.agent.Reloaded(3, nil)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready; config v3 loaded")

		// Overlapping reloads: one RELOADING=1, one READY=1 at the end.
		f.agent.Reloading()
		f.agent.Reloading()
		f.agent.Reloaded(0, errors.New("these keys need a restart:\n storage.engine"))
		synctest.Wait()
		if got := f.rec.take(true); len(got) != 1 || !strings.HasPrefix(got[0], MsgReloading) {
			t.Fatalf("overlapping reloads began with %q", got)
		}
		f.agent.Reloaded(0, errors.New("these keys need a restart:\n storage.engine"))
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready; reload refused: these keys need a restart: storage.engine")
	})
}

func TestStoppingEndsTheProtocol(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, true)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")
		f.agent.Reloading()
		synctest.Wait()
		f.rec.take(true)
		f.bus.Publish(runtime.ConfigUpdated{Version: 9}) // other events: nothing
		f.bus.Publish(runtime.Shutdown{})
		f.bus.Publish(runtime.Shutdown{})
		synctest.Wait()
		expect(t, f.rec.take(true), MsgStopping+"\nSTATUS=shutting down: draining")
		f.agent.Reloaded(4, nil) // the open reload ends after STOPPING=1: no READY=1
		f.agent.Reloading()
		time.Sleep(time.Second)
		synctest.Wait()
		expect(t, f.rec.take(true))
	})
}

func TestStoppingBeforeReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, false)
		synctest.Wait()
		f.rec.take(true)
		f.bus.Publish(runtime.Shutdown{})
		synctest.Wait()
		f.ready.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgStopping+"\nSTATUS=shutting down: draining")
	})
}

func TestWatchdogCadence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 10*time.Second, true)
		time.Sleep(21 * time.Second)
		synctest.Wait()
		var at []time.Duration
		f.rec.mu.Lock()
		for _, s := range f.rec.msgs {
			if s.msg == MsgWatchdog {
				at = append(at, s.at)
			}
		}
		f.rec.mu.Unlock()
		want := []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second}
		if !slices.Equal(at, want) {
			t.Fatalf("WATCHDOG=1 at %v, want %v (every WATCHDOG_USEC/2)", at, want)
		}
		// Keep-alives continue through the shutdown and end with Stop.
		f.bus.Publish(runtime.Shutdown{})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := f.rec.take(true); got[len(got)-1] != MsgWatchdog || !slices.Contains(got, MsgStopping+"\nSTATUS=shutting down: draining") {
			t.Fatalf("after shutdown: %q", got)
		}
		f.agent.Stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		expect(t, f.rec.take(true))
	})
}

func TestSendFailuresAreSurvived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2*time.Second, false)
		synctest.Wait()
		f.rec.take(true) // the first STATUS=
		f.rec.fail.Store(true)
		f.ready.Store(true)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		expect(t, f.rec.take(true)) // READY=1 and keep-alives lost with the socket
		f.rec.fail.Store(false)
		time.Sleep(900 * time.Millisecond) // the poll at 5.25 s retries READY=1; the ping at 6 s
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgWatchdog)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgWatchdog, MsgWatchdog) // pings at 7 s and 8 s; polling has ended
	})
}

func TestNilAgent(t *testing.T) {
	a := New(Options{})
	if a != nil {
		t.Fatal("New without a Sender must return nil")
	}
	a.Start()
	a.Reloading()
	a.Reloaded(1, nil)
	a.Stop()
}

func TestStopWithoutStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{Sender: &recorder{}, Log: zerolog.Nop()})
		a.Stop()
		a.Stop()
		a.Reloading() // after Stop: dropped at once
	})
}

func TestCheckReadyNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, false)
		synctest.Wait()
		f.rec.take(true)
		f.ready.Store(true)
		f.agent.CheckReady() // no poll tick needed
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")
		f.agent.CheckReady() // once ready: nothing more
		synctest.Wait()
		expect(t, f.rec.take(true))
	})
}

// TestStopSendsAPendingStopping: a node may stop before the worker reads
// the Shutdown event; Stop still sends STOPPING=1.
func TestStopSendsAPendingStopping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0, true)
		synctest.Wait()
		expect(t, f.rec.take(true), MsgReady+"\nSTATUS=ready")
		f.agent.group.Stop(context.Background()) // the worker is gone before the event
		f.bus.Publish(runtime.Shutdown{})
		f.agent.Stop()
		expect(t, f.rec.take(true), MsgStopping+"\nSTATUS=shutting down: draining")
	})
}
