package main

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// errKind classifies a request that got no HTTP status.
type errKind int

const (
	errNone    errKind = iota
	errConn            // dial, reset, protocol or body read failure
	errTimeout         // the per-request timeout passed
)

// outcome is one finished request. at is its scheduled (open loop) or
// actual (closed loop) send time as an offset from the start of the
// measured part; negative offsets fall in the warm-up.
type outcome struct {
	at         time.Duration
	lat        time.Duration // from at to the end of the body
	status     int           // 0 when kind != errNone
	retryAfter bool          // the answer carried Retry-After
	kind       errKind
	err        string
}

// stats accumulates one class's outcomes; safe for concurrent use.
type stats struct {
	mu         sync.Mutex
	window     time.Duration
	sent       int
	dropped    int
	completed  int
	connErrors int
	timeouts   int
	status     map[int]int
	retryAfter map[string]int
	windows    []windowStats
	lat        []time.Duration // 2xx latencies
	sendLag    time.Duration   // worst lateness of a send vs its schedule
	warm       warmStats
	lastError  string
}

// windowStats is one latency window of the measured part.
type windowStats struct {
	sent int
	lat  []time.Duration // 2xx latencies
}

// warmStats counts the warm-up, apart from the measured figures.
type warmStats struct {
	Sent      int `json:"sent"`
	Dropped   int `json:"dropped"`
	Completed int `json:"completed"`
	OK        int `json:"ok"`
}

// newStats returns stats for a measured part of duration d cut into
// windows of width w.
func newStats(d, w time.Duration) *stats {
	n := int((d + w - 1) / w)
	return &stats{window: w, status: map[int]int{}, retryAfter: map[string]int{}, windows: make([]windowStats, n)}
}

// windowOf returns the window index of offset at (clamped to the last).
func (s *stats) windowOf(at time.Duration) int {
	return min(int(at/s.window), len(s.windows)-1)
}

// sendOutcome records a send scheduled at offset at that went out lag late,
// or was dropped because the class had too many requests outstanding.
func (s *stats) sendOutcome(at, lag time.Duration, dropped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLag = max(s.sendLag, lag)
	switch {
	case at < 0 && dropped:
		s.warm.Dropped++
	case at < 0:
		s.warm.Sent++
	case dropped:
		s.dropped++
	default:
		s.sent++
		s.windows[s.windowOf(at)].sent++
	}
}

// add records a finished request.
func (s *stats) add(o outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := o.kind == errNone && o.status >= 200 && o.status < 300
	if o.at < 0 {
		if o.kind == errNone {
			s.warm.Completed++
		}
		if ok {
			s.warm.OK++
		}
		return
	}
	switch o.kind {
	case errConn:
		s.connErrors++
		s.lastError = o.err
		return
	case errTimeout:
		s.timeouts++
		s.lastError = o.err
		return
	}
	s.completed++
	s.status[o.status]++
	if o.status == 429 || o.status == 503 {
		key := strconv.Itoa(o.status) + "_without"
		if o.retryAfter {
			key = strconv.Itoa(o.status) + "_with"
		}
		s.retryAfter[key]++
	}
	if ok {
		s.lat = append(s.lat, o.lat)
		w := &s.windows[s.windowOf(o.at)]
		w.lat = append(w.lat, o.lat)
	}
}

// merge adds o's counts and samples into s (for the "all" summary).
func (s *stats) merge(o *stats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent += o.sent
	s.dropped += o.dropped
	s.completed += o.completed
	s.connErrors += o.connErrors
	s.timeouts += o.timeouts
	for k, v := range o.status {
		s.status[k] += v
	}
	for k, v := range o.retryAfter {
		s.retryAfter[k] += v
	}
	s.lat = append(s.lat, o.lat...)
	for i := range s.windows {
		s.windows[i].sent += o.windows[i].sent
		s.windows[i].lat = append(s.windows[i].lat, o.windows[i].lat...)
	}
	s.sendLag = max(s.sendLag, o.sendLag)
	s.warm.Sent += o.warm.Sent
	s.warm.Dropped += o.warm.Dropped
	s.warm.Completed += o.warm.Completed
	s.warm.OK += o.warm.OK
	if o.lastError != "" {
		s.lastError = o.lastError
	}
}

// percentiles are latency quantiles in milliseconds (nearest rank).
type percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// percentilesOf sorts lat in place and returns its quantiles.
func percentilesOf(lat []time.Duration) percentiles {
	slices.Sort(lat)
	return percentiles{N: len(lat), P50: ms(quantile(lat, 0.50)), P90: ms(quantile(lat, 0.90)),
		P99: ms(quantile(lat, 0.99)), Max: ms(quantile(lat, 1))}
}

// quantile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted; 0 when it
// is empty.
func quantile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// ms converts to milliseconds rounded to µs.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
