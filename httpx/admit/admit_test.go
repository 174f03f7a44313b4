package admit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newQueue(capacity int, timeout time.Duration) (*Queue, *runtime.Metrics) {
	m := runtime.NewMetrics(nil)
	return New(Options{Role: "index", Metrics: m, QueueConfig: QueueConfig{QueueCapacity: capacity, QueueTimeout: timeout}}), m
}

func TestFullQueueRejectsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, m := newQueue(1, 5*time.Second)
		p := NewPool(1)
		release, err := q.Enter(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := q.Enter(t.Context(), NewPool(1)); err != ErrBusy || time.Since(start) != 0 {
			t.Fatalf("full queue: %v after %v", err, time.Since(start))
		}
		vals := m.Values()
		if vals[`ron_queue_depth{role="index",queue="work"}`] != 1 ||
			vals[`ron_queue_capacity{role="index",queue="work"}`] != 1 {
			t.Fatalf("metrics %v", vals)
		}
		if _, ok := vals[`ron_queue_dropped_total{role="index",queue="work"}`]; !ok {
			t.Fatal("ron_queue_dropped_total not exported")
		}
		release()
		release() // idempotent
		if q.Depth() != 0 || len(p) != 0 {
			t.Fatalf("depth %d, pool %d", q.Depth(), len(p))
		}
	})
}

func TestWaitTimesOutThenReloads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := newQueue(10, 5*time.Second)
		p := NewPool(1)
		hold, _ := q.Enter(t.Context(), p)
		defer hold()
		start := time.Now()
		if _, err := q.Enter(t.Context(), p); err != ErrBusy || time.Since(start) != 5*time.Second {
			t.Fatalf("no slot: %v after %v", err, time.Since(start))
		}
		q.setTimeout(time.Second)
		start = time.Now()
		if _, err := q.Enter(t.Context(), p); err != ErrBusy || time.Since(start) != time.Second {
			t.Fatalf("reloaded timeout: %v after %v", err, time.Since(start))
		}
		if q.Depth() != 1 {
			t.Fatalf("depth %d after timeouts", q.Depth())
		}
	})
}

func TestSlotFreedAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := newQueue(10, 5*time.Second)
		p := NewPool(1)
		release, _ := q.Enter(t.Context(), p)
		go func() {
			time.Sleep(2 * time.Second)
			release()
		}()
		start := time.Now()
		rel, err := q.Enter(t.Context(), p)
		if err != nil || time.Since(start) != 2*time.Second {
			t.Fatalf("freed slot: %v after %v", err, time.Since(start))
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(time.Second); cancel() }()
		if _, err := q.Enter(ctx, p); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
		rel()
		if q.Depth() != 0 {
			t.Fatalf("depth %d", q.Depth())
		}
	})
}

func TestCapacityChangesLive(t *testing.T) {
	q, _ := newQueue(1, 0)
	p := NewPool(4)
	r1, err := q.Enter(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	if _, err := q.Enter(t.Context(), p); err != ErrBusy {
		t.Fatalf("capacity 1: %v", err)
	}
	q.setCapacity(2)
	r2, err := q.Enter(t.Context(), p)
	if err != nil {
		t.Fatalf("capacity 2: %v", err)
	}
	r2()
}

func TestCustomBusyAndNoWait(t *testing.T) {
	mine := errors.New("mine")
	q := New(Options{QueueConfig: QueueConfig{QueueCapacity: 5}, Busy: mine})
	p := NewPool(1)
	r, _ := q.Enter(t.Context(), p)
	defer r()
	if _, err := q.Enter(t.Context(), p); err != mine {
		t.Fatalf("zero timeout: %v, want the custom error at once", err)
	}
}

func TestOptionBounds(t *testing.T) {
	cases := []struct {
		name     string
		capacity int
		workers  int
		timeout  time.Duration
		wantCap  int64
		wantPool int
		wantWait time.Duration
	}{
		{"zero capacity", 0, 1, 0, 1, 1, 0},
		{"negative capacity", -5, 1, 0, 1, 1, 0},
		{"zero workers", 3, 0, 0, 3, 1, 0},
		{"negative workers", 3, -2, 0, 3, 1, 0},
		{"negative timeout", 3, 2, -time.Second, 3, 2, 0},
		{"plain", 512, 256, time.Second, 512, 256, time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := New(Options{QueueConfig: QueueConfig{QueueCapacity: c.capacity, QueueTimeout: c.timeout}})
			p := NewPool(c.workers)
			if q.Capacity() != c.wantCap || cap(p) != c.wantPool || q.Timeout() != c.wantWait {
				t.Fatalf("capacity %d pool %d timeout %v", q.Capacity(), cap(p), q.Timeout())
			}
		})
	}
}
