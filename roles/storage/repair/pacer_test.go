package repair

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// sent is one chunk handed to the network at a time.
type sent struct {
	at time.Time
	n  int
}

// transfers runs workers fake transfers of size bytes each through p's
// Reader until ctx ends, logging every chunk as it is read.
func transfers(ctx context.Context, p *Pacer, workers int, size int64) (log func() []sent, wait func()) {
	var mu sync.Mutex
	var out []sent
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				src := &memSource{data: make([]byte, size)}
				_, _ = io.Copy(io.Discard, p.Reader(ctx, size, src, func(n int) {
					mu.Lock()
					out = append(out, sent{time.Now(), n})
					mu.Unlock()
				}))
			}
		})
	}
	return func() []sent {
		mu.Lock()
		defer mu.Unlock()
		return append([]sent(nil), out...)
	}, wg.Wait
}

// roundingSlack absorbs the token bucket's rounding of waits to whole
// nanoseconds (a few bytes at these paces).
const roundingSlack = 64

// memSource yields data in 64 KiB chunks.
type memSource struct {
	data []byte
	off  int
}

func (m *memSource) Next() ([]byte, error) {
	if m.off == len(m.data) {
		return nil, io.EOF
	}
	n := min(store.ChunkSize, len(m.data)-m.off)
	c := m.data[m.off : m.off+n]
	m.off += n
	return c, nil
}

// checkWindows asserts bytes sent in every window [t_i, t_j] stay within
// pace·Δ + Burst (plus roundingSlack).
func checkWindows(t *testing.T, log []sent, pace int64) {
	t.Helper()
	for i := range log {
		var sum int64
		for j := i; j < len(log); j++ {
			sum += int64(log[j].n)
			d := log[j].at.Sub(log[i].at).Seconds()
			if limit := float64(pace)*d + Burst + roundingSlack; float64(sum) > limit {
				t.Fatalf("%d bytes in %.3fs exceed %.0f", sum, d, limit)
			}
		}
	}
}

// TestPacerSafety: four workers moving objects of 1.5 chunks and 10 chunks
// never exceed pace·Δ + 1 MiB in any window, and use the pace fully.
func TestPacerSafety(t *testing.T) {
	for _, size := range []int64{store.ChunkSize*3/2 + 7, 10 * store.ChunkSize} {
		synctest.Test(t, func(t *testing.T) {
			const pace = 4 << 20
			var waits atomic.Int64
			p := NewPacer(pace, func(time.Duration) { waits.Add(1) })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			log, wait := transfers(ctx, p, 4, size)
			wait()
			got := log()
			checkWindows(t, got, pace)
			var total int64
			for _, s := range got {
				total += int64(s.n)
			}
			if min := int64(pace * 19); total < min {
				t.Fatalf("moved %d bytes in 20 s, want ≥ %d", total, min)
			}
			if waits.Load() == 0 {
				t.Fatal("no wait observed")
			}
		})
	}
}

// TestPacerBoostAndPause: a boost raises the pace until it ends; a boost of
// 0 pauses every transfer until the configured pace returns.
func TestPacerBoostAndPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pace = 1 << 20
		p := NewPacer(pace, nil)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.Boost(0, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		log, wait := transfers(ctx, p, 2, 4*store.ChunkSize)
		time.Sleep(5 * time.Second)
		if n := len(log()); n != 0 {
			t.Fatalf("%d chunks sent while paused", n)
		}
		if p.Pace() != 0 || !p.BoostUntil().Equal(start.Add(10*time.Second)) {
			t.Fatalf("pace %d until %v", p.Pace(), p.BoostUntil())
		}
		time.Sleep(10 * time.Second) // the pause ended at 10 s
		if p.Pace() != pace || !p.BoostUntil().IsZero() {
			t.Fatalf("after the boost: pace %d until %v", p.Pace(), p.BoostUntil())
		}
		until, err := p.Boost(8<<20, 5*time.Second)
		if err != nil || !until.Equal(start.Add(20*time.Second)) {
			t.Fatalf("boost until %v: %v", until, err)
		}
		wait()
		got := log()
		if got[0].at.Before(start.Add(10 * time.Second)) {
			t.Fatalf("first chunk at %v", got[0].at.Sub(start))
		}
		var boosted int64
		for _, s := range got {
			if !s.at.Before(start.Add(15*time.Second)) && s.at.Before(start.Add(20*time.Second)) {
				boosted += int64(s.n)
			}
			if s.at.After(start.Add(20 * time.Second)) {
				break
			}
		}
		if boosted < 30<<20 || boosted > 41<<20+Burst {
			t.Fatalf("%d bytes during the 5 s boost at 8 MiB/s", boosted)
		}
		checkWindows(t, after(got, start.Add(20*time.Second)), pace)
		p.Stop()
	})
}

func after(log []sent, t time.Time) []sent {
	for i, s := range log {
		if !s.at.Before(t) {
			return log[i:]
		}
	}
	return nil
}

// TestPacerBoostBounds rejects bad boosts and reload changes the pace.
func TestPacerBoostBounds(t *testing.T) {
	p := NewPacer(100, nil)
	for _, c := range []struct {
		n int64
		d time.Duration
	}{{-1, time.Second}, {1, 0}, {1, storageapi.MaxRepairBoost + time.Second}} {
		if _, err := p.Boost(c.n, c.d); err == nil {
			t.Fatalf("Boost(%d, %v) accepted", c.n, c.d)
		}
	}
	p.SetConfigured(200)
	if p.Pace() != 200 {
		t.Fatalf("pace %d", p.Pace())
	}
	if err := p.Wait(context.Background(), Burst+1); err == nil {
		t.Fatal("wait above the burst accepted")
	}
}

// TestPacedReader: bytes arrive whole; a source that ends early, sends a
// wrong chunk length or keeps going past the size fails.
func TestPacedReader(t *testing.T) {
	data := bytes.Repeat([]byte("x"), store.ChunkSize+5)
	p := NewPacer(1<<30, nil)
	var counted int
	got, err := io.ReadAll(p.Reader(context.Background(), int64(len(data)), &memSource{data: data}, func(n int) { counted += n }))
	if err != nil || !bytes.Equal(got, data) || counted != len(data) {
		t.Fatalf("read %d bytes, counted %d: %v", len(got), counted, err)
	}
	cases := []struct {
		name string
		size int64
		src  ChunkSource
	}{
		{"short", int64(len(data)) + store.ChunkSize, &memSource{data: data}},
		{"long", store.ChunkSize, &memSource{data: data}},
		{"wrong chunk", int64(len(data)) - 1, &memSource{data: data}},
		{"source error", 10, errSource{}},
	}
	for _, c := range cases {
		if _, err := io.ReadAll(p.Reader(context.Background(), c.size, c.src, nil)); err == nil {
			t.Fatalf("%s: no error", c.name)
		}
	}
}

type errSource struct{}

func (errSource) Next() ([]byte, error) { return nil, errors.New("disk") }
