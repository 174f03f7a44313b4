package httpapi

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
)

func TestWatchReconnectsWithBackoff(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := must(e.httpClient().Watch(ctx, nil)).get(t)
		recv(t, ch) // HEAD, version 0
		synctest.Wait()
		e.ln.SetRefuse(true)
		before := len(e.ln.DialTimes())
		dropped := time.Now()
		e.ln.DropAll()
		e.cycle("a")
		e.cycle("b")
		time.Sleep(20 * time.Second)
		dials := e.ln.DialTimes()[before:]
		if len(dials) < 6 {
			t.Fatalf("%d reconnection attempts in 20 s", len(dials))
		}
		prev := dropped
		for i, at := range dials {
			gap, nominal := at.Sub(prev), min(100*time.Millisecond<<i, 5*time.Second)
			if gap < nominal*8/10 || gap > min(nominal*12/10, 5*time.Second) {
				t.Fatalf("attempt %d after %v, want %v ±20%% (≤ 5 s)", i, gap, nominal)
			}
			prev = at
		}
		e.ln.SetRefuse(false)
		for v := uint64(1); v <= 2; v++ { // replayed after Last-Event-ID: 0
			if u := recv(t, ch); u.Version != v {
				t.Fatalf("after reconnect got version %d, want %d", u.Version, v)
			}
		}
		e.cycle("c")
		if u := recv(t, ch); u.Version != 3 || u.CorrID != "corr-c" {
			t.Fatalf("live after reconnect %+v", u)
		}
		cancel()
		for range ch { // closed once ctx ends
		}
	})
}

func TestWatchDropsToLatest(t *testing.T) {
	forEachClient(t, "drop-to-latest", func(t *testing.T, c registryapi.Client, e *env) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := must(c.Watch(ctx, nil)).get(t)
		for i := range registryapi.WatchBuffer + 6 {
			e.cycle(fmt.Sprint(i))
		}
		synctest.Wait()
		if len(ch) != registryapi.WatchBuffer {
			t.Fatalf("%d updates queued, want %d", len(ch), registryapi.WatchBuffer)
		}
		for v := uint64(7); v <= registryapi.WatchBuffer+6; v++ {
			if u := recv(t, ch); u.Version != v {
				t.Fatalf("got version %d, want %d (oldest dropped, order kept)", u.Version, v)
			}
		}
	})
}

func TestWatchFirstConnectFails(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.a.Hub().Close()
		_, err := e.httpClient().Watch(context.Background(), nil)
		checkErr(t, "watch after close", err, want{503, "draining", nil, 5})
		_, err = NewLocalClient(e.a).Watch(context.Background(), nil)
		checkErr(t, "local watch after close", err, want{503, "draining", nil, 5})
	})
}
