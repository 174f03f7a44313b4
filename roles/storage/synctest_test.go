package storage

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

// TestStallReaderTimesOut: net.Pipe deadlines follow the bubble's clock, so
// an upload that goes silent fails exactly upload_stall_timeout after its
// last byte, and writeFailed maps that to 408 timeout.
func TestStallReaderTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, cli := net.Pipe()
		defer srv.Close()
		defer cli.Close()
		go func() {
			_, _ = cli.Write([]byte("abc"))
			time.Sleep(4 * time.Second) // under the stall timeout: no failure
			_, _ = cli.Write([]byte("def"))
		}()
		start := time.Now()
		sr := newStallReader(srv, srv, 5*time.Second)
		got, err := io.ReadAll(sr)
		if string(got) != "abcdef" || sr.n != 6 {
			t.Fatalf("read %q (n=%d)", got, sr.n)
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || !isBodyError(err) {
			t.Fatalf("err %v", err)
		}
		if d := time.Since(start); d != 9*time.Second {
			t.Fatalf("failed after %v, want 9s", d)
		}
		r := New(Options{Config: DefaultConfig(), Env: module.Env{Metrics: runtime.NewMetrics(nil)}})
		wantErr(t, r.writeFailed(err), http.StatusRequestTimeout, httpx.CodeTimeout)
		m := scrapeSet(t, r.opt.Metrics)
		if m[series("io_timeouts_total", "op", "read_body")] != 1 || m[series("storage_writes_total", "result", "aborted")] != 1 {
			t.Fatalf("metrics %v", m)
		}
	})
}

// pipeWriter is a ResponseWriter whose read deadline is the pipe's, as a
// real connection's would be through http.ResponseController.
type pipeWriter struct {
	*httptest.ResponseRecorder
	conn net.Conn
}

func (w pipeWriter) SetReadDeadline(t time.Time) error { return w.conn.SetReadDeadline(t) }

// TestStalledUploadHandler drives the whole POST /o handler with a body that
// stalls: 408 timeout, Connection: close, nothing stored.
func TestStalledUploadHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys, err := auth.GenerateKeyring()
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Listen, cfg.Engine = "127.0.0.1:0", "memory"
		r := New(Options{Config: cfg, Env: module.Env{DataDir: t.TempDir(), Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil), Keys: keys}})
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer r.Stop(context.Background())
		srv, cli := net.Pipe()
		defer srv.Close()
		defer cli.Close()
		go func() { _, _ = cli.Write([]byte("partial")) }()
		tok, _, _ := keys.Mint(auth.MintOptions{Scopes: []string{storageapi.ScopeWrite}, TTL: time.Hour})
		hr := httptest.NewRequest("POST", "/o", srv)
		hr.ContentLength = 100
		hr.Header.Set("Authorization", "Bearer "+tok)
		w := pipeWriter{httptest.NewRecorder(), srv}
		start := time.Now()
		r.Server().Echo().ServeHTTP(w, hr)
		if d := time.Since(start); d != cfg.UploadStallTimeout {
			t.Fatalf("answered after %v", d)
		}
		resp := w.Result()
		body, _ := io.ReadAll(resp.Body)
		wantError(t, resp, body, http.StatusRequestTimeout, httpx.CodeTimeout)
		if resp.Header.Get("Connection") != "close" {
			t.Fatalf("headers %v", resp.Header)
		}
		if infos, _ := r.engine.List(context.Background(), nil, 0); len(infos) != 0 {
			t.Fatalf("stored %v", infos)
		}
	})
}

func TestWorkQueueFullAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newWorkQueue(runtime.NewMetrics(nil), admit.QueueConfig{QueueCapacity: 1, QueueTimeout: 5 * time.Second}, 1, 1)
		release, err := a.enter(context.Background(), a.put)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := a.enter(context.Background(), a.get); err != errBusy || time.Since(start) != 0 {
			t.Fatalf("full queue: %v after %v", err, time.Since(start))
		}
		release()
		release() // idempotent
		if a.q.Depth() != 0 || len(a.put) != 0 {
			t.Fatalf("depth %d, put %d", a.q.Depth(), len(a.put))
		}
	})
}

func TestWorkQueueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newWorkQueue(runtime.NewMetrics(nil), admit.QueueConfig{QueueCapacity: 10, QueueTimeout: 5 * time.Second}, 1, 1)
		release, _ := a.enter(context.Background(), a.put)
		defer release()
		start := time.Now()
		if _, err := a.enter(context.Background(), a.put); err != errBusy || time.Since(start) != 5*time.Second {
			t.Fatalf("no slot: %v after %v", err, time.Since(start))
		}
		a.q.Configure(admit.QueueConfig{QueueCapacity: 10, QueueTimeout: time.Second}) // hot reload
		start = time.Now()
		if _, err := a.enter(context.Background(), a.put); err != errBusy || time.Since(start) != time.Second {
			t.Fatalf("reloaded timeout: %v after %v", err, time.Since(start))
		}
		if a.q.Depth() != 1 {
			t.Fatalf("depth %d after timeouts", a.q.Depth())
		}
		rel, err := a.enter(context.Background(), a.get) // the other pool is free
		if err != nil {
			t.Fatal(err)
		}
		rel()
	})
}

func TestWorkQueueSlotFreed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newWorkQueue(runtime.NewMetrics(nil), admit.QueueConfig{QueueCapacity: 10, QueueTimeout: 5 * time.Second}, 1, 1)
		release, _ := a.enter(context.Background(), a.put)
		go func() {
			time.Sleep(2 * time.Second)
			release()
		}()
		start := time.Now()
		rel, err := a.enter(context.Background(), a.put)
		if err != nil || time.Since(start) != 2*time.Second {
			t.Fatalf("freed slot: %v after %v", err, time.Since(start))
		}
		rel()
		ctx, cancel := context.WithCancel(context.Background())
		hold, _ := a.enter(context.Background(), a.put)
		go func() { time.Sleep(time.Second); cancel() }()
		if _, err := a.enter(ctx, a.put); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
		hold()
		if a.q.Depth() != 0 {
			t.Fatalf("depth %d", a.q.Depth())
		}
	})
}

// timedSink records each call's time and batch size and fails while fail > 0.
type timedSink struct {
	mu    sync.Mutex
	at    []time.Time
	sizes []int
	fail  int
	err   error
}

func (s *timedSink) Announce(ctx context.Context, batch []announcing.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	s.sizes = append(s.sizes, len(batch))
	if s.fail > 0 {
		s.fail--
		return s.err
	}
	return nil
}

// snap returns copies of the call times and sizes.
func (s *timedSink) snap() ([]time.Time, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...), append([]int(nil), s.sizes...)
}

// runAnnouncer starts the announce worker in the bubble; stop ends it.
func runAnnouncer(a *announcer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.run(ctx) }()
	return func() { cancel(); <-done }
}

func records(n int, ttl time.Duration) []announcing.Record {
	out := make([]announcing.Record, n)
	for i := range out {
		out[i] = announcing.Record{ID: store.Sum([]byte{byte(i), byte(i >> 8)}), TTL: ttl}
	}
	return out
}

func TestAnnouncerBatchesOf1000(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink, m := &timedSink{}, runtime.NewMetrics(nil)
		a := newAnnouncer(sink, m, 3000)
		for _, r := range records(2500, time.Minute) {
			a.enqueue(r)
		}
		start := time.Now()
		stop := runAnnouncer(a)
		defer stop()
		time.Sleep(time.Second)
		at, sizes := sink.snap()
		if len(sizes) != 3 || sizes[0] != 1000 || sizes[1] != 1000 || sizes[2] != 500 {
			t.Fatalf("batches %v", sizes)
		}
		if at[1].Sub(start) != 0 || at[2].Sub(start) != announceGather {
			t.Fatalf("sent at %v", at)
		}
		if got := scrapeSet(t, m)[series("storage_announces_total", "result", "ok")]; got != 2500 {
			t.Fatalf("ok = %v", got)
		}
	})
}

func TestAnnouncerGathers250ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink, m := &timedSink{}, runtime.NewMetrics(nil)
		a := newAnnouncer(sink, m, 10)
		recs := records(3, time.Minute)
		recs[1].TTL = 0
		stop := runAnnouncer(a)
		defer stop()
		start := time.Now()
		a.enqueue(recs[0])
		time.Sleep(100 * time.Millisecond)
		a.enqueue(recs[1])
		time.Sleep(200 * time.Millisecond)
		a.enqueue(recs[2])
		time.Sleep(time.Second)
		at, sizes := sink.snap()
		if len(sizes) != 2 || sizes[0] != 2 || sizes[1] != 1 {
			t.Fatalf("batches %v", sizes)
		}
		if at[0].Sub(start) != 250*time.Millisecond || at[1].Sub(start) != 550*time.Millisecond {
			t.Fatalf("sent at %v", at)
		}
		got := scrapeSet(t, m)
		if got[series("storage_announces_total", "result", "ok")] != 2 || got[series("storage_announces_total", "result", "withdrawn")] != 1 {
			t.Fatalf("metrics %v", got)
		}
	})
}

func TestAnnouncerRetries(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fail          int
		err           error
		calls         int
		result        string
		retries       float64
		checkBackoffs bool
	}{
		{"gives up after 3 retries", 10, errors.New("index down"), 4, "error", 3, true},
		{"recovers", 2, errors.New("index down"), 3, "ok", 2, true},
		{"4xx is final", 10, httpx.NewError(400, httpx.CodeBadRequest, "bad"), 1, "error", 0, false},
		{"429 is retried", 1, httpx.NewError(429, httpx.CodeBusy, "busy"), 2, "ok", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink, m := &timedSink{fail: tc.fail, err: tc.err}, runtime.NewMetrics(nil)
				a := newAnnouncer(sink, m, 10)
				stop := runAnnouncer(a)
				defer stop()
				a.enqueue(records(1, time.Minute)[0])
				time.Sleep(10 * time.Second)
				at, _ := sink.snap()
				if len(at) != tc.calls {
					t.Fatalf("%d calls, want %d", len(at), tc.calls)
				}
				for i := 1; i < len(at) && tc.checkBackoffs; i++ {
					gap, nominal := at[i].Sub(at[i-1]), 75*time.Millisecond<<(i-1)
					if gap < nominal*2/3 || gap > nominal*4/3 || gap > 2*time.Second {
						t.Fatalf("retry %d after %v (nominal %v)", i, gap, nominal)
					}
				}
				got := scrapeSet(t, m)
				if got[series("storage_announces_total", "result", tc.result)] != 1 ||
					got[series("backoff_retries_total", "op", "announce")] != tc.retries {
					t.Fatalf("metrics %v", got)
				}
			})
		})
	}
}

func TestAnnouncerDropsOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink, m := &timedSink{}, runtime.NewMetrics(nil)
		a := newAnnouncer(sink, m, 2)
		recs := records(3, time.Minute)
		for _, r := range recs {
			a.enqueue(r)
		}
		first, _ := a.queue.TryPop()
		if first != recs[1] {
			t.Fatalf("oldest kept: %v", first)
		}
		got := scrapeSet(t, m)
		if got[series("storage_announces_total", "result", "dropped")] != 1 || got[series("queue_dropped_total", "queue", "announce")] != 1 {
			t.Fatalf("metrics %v", got)
		}
	})
}

func TestAnnouncerFlushOnStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &timedSink{}
		a := newAnnouncer(sink, runtime.NewMetrics(nil), 2000)
		for _, r := range records(1500, time.Minute) {
			a.enqueue(r)
		}
		a.queue.Close()
		a.flush(context.Background())
		_, sizes := sink.snap()
		if len(sizes) != 2 || sizes[0] != 1000 || sizes[1] != 500 {
			t.Fatalf("flushed %v", sizes)
		}
		off := newAnnouncer(nil, runtime.NewMetrics(nil), 1)
		off.enqueue(announcing.Record{}) // announcing off: no-op
		off.flush(context.Background())
		if off.enabled() {
			t.Fatal("nil sink enabled")
		}
	})
}
