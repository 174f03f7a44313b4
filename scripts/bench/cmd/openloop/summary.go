package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Summary is the JSON document openloop writes.
type Summary struct {
	Mode      string         `json:"mode"` // "open" or "closed"
	DurationS float64        `json:"duration_s"`
	WarmupS   float64        `json:"warmup_s"`
	WindowS   float64        `json:"window_s"`
	TimeoutS  float64        `json:"timeout_s"`
	Classes   []ClassSummary `json:"classes"`
	// All adds every class up (its share_ok is 1 when any 2xx came back).
	All ClassSummary `json:"all"`
}

// ClassSummary is one class's figures over the measured part (requests
// scheduled, or in closed loop started, after the warm-up).
type ClassSummary struct {
	Name           string         `json:"name"`
	URL            string         `json:"url,omitempty"`
	Method         string         `json:"method,omitempty"`
	Rate           float64        `json:"rate,omitempty"`        // offered req/s (open loop)
	Concurrency    int            `json:"concurrency,omitempty"` // workers (closed loop)
	MaxOutstanding int            `json:"max_outstanding,omitempty"`
	Sent           int            `json:"sent"`
	Dropped        int            `json:"dropped"` // not sent: max_outstanding reached
	Completed      int            `json:"completed"`
	ConnErrors     int            `json:"conn_errors"`
	Timeouts       int            `json:"timeouts"`
	Status         map[string]int `json:"status"`      // HTTP status → answers
	RetryAfter     map[string]int `json:"retry_after"` // 429_with, 429_without, 503_with, 503_without
	OK             int            `json:"ok"`          // 2xx answers
	OKPerS         float64        `json:"ok_per_s"`    // 2xx per second of the measured part
	ShareOK        float64        `json:"share_ok"`    // this class's part of all classes' 2xx
	Latency        percentiles    `json:"latency_ms"`  // of the 2xx, from the scheduled send time
	Windows        []Window       `json:"windows"`
	MaxSendLagMS   float64        `json:"max_send_lag_ms"` // generator lateness (open loop)
	Warmup         warmStats      `json:"warmup"`
	LastError      string         `json:"last_error,omitempty"`
}

// Window is one latency window: requests scheduled in [start_s, end_s) of
// the measured part.
type Window struct {
	StartS  float64     `json:"start_s"`
	EndS    float64     `json:"end_s"`
	Sent    int         `json:"sent"`
	Latency percentiles `json:"latency_ms"` // of the 2xx
}

// summarize builds the summary of a finished run; st[i] belongs to
// cfg.classes[i].
func summarize(cfg config, st []*stats) Summary {
	sum := Summary{Mode: "open", DurationS: cfg.duration.Seconds(), WarmupS: cfg.warmup.Seconds(),
		WindowS: cfg.window.Seconds(), TimeoutS: cfg.timeout.Seconds()}
	if !cfg.open() {
		sum.Mode = "closed"
	}
	all := newStats(cfg.duration, cfg.window)
	for i, c := range cfg.classes {
		all.merge(st[i])
		cs := classSummary(cfg, c.name, st[i])
		cs.URL, cs.Method = c.url, c.method
		if cfg.open() {
			cs.Rate, cs.MaxOutstanding = c.rate, cfg.outstanding(c)
		} else {
			cs.Concurrency = cfg.closed
		}
		sum.Classes = append(sum.Classes, cs)
	}
	sum.All = classSummary(cfg, "all", all)
	for i := range sum.Classes {
		if sum.All.OK > 0 {
			sum.Classes[i].ShareOK = round(float64(sum.Classes[i].OK)/float64(sum.All.OK), 4)
		}
	}
	if sum.All.OK > 0 {
		sum.All.ShareOK = 1
	}
	return sum
}

// classSummary renders s (the caller owns it: the run is over).
func classSummary(cfg config, name string, s *stats) ClassSummary {
	cs := ClassSummary{
		Name: name, Sent: s.sent, Dropped: s.dropped, Completed: s.completed,
		ConnErrors: s.connErrors, Timeouts: s.timeouts,
		Status:     map[string]int{},
		RetryAfter: map[string]int{"429_with": 0, "429_without": 0, "503_with": 0, "503_without": 0},
		OK:         len(s.lat),
		Latency:    percentilesOf(s.lat),
		Warmup:     s.warm,
		LastError:  s.lastError,
	}
	cs.MaxSendLagMS = ms(s.sendLag)
	cs.OKPerS = round(float64(cs.OK)/cfg.duration.Seconds(), 2)
	for k, v := range s.status {
		cs.Status[strconv.Itoa(k)] = v
	}
	for k, v := range s.retryAfter {
		cs.RetryAfter[k] = v
	}
	for i, w := range s.windows {
		start := time.Duration(i) * cfg.window
		end := min(start+cfg.window, cfg.duration)
		cs.Windows = append(cs.Windows, Window{StartS: start.Seconds(), EndS: end.Seconds(), Sent: w.sent,
			Latency: percentilesOf(w.lat)})
	}
	return cs
}

// round rounds x to n decimals.
func round(x float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(x*p) / p
}

// printBrief writes one human line per class to w.
func printBrief(w io.Writer, s Summary) {
	for _, c := range append(s.Classes, s.All) {
		fmt.Fprintf(w, "openloop %s: sent=%d dropped=%d completed=%d ok=%d (%.1f/s, share %.3f) conn_errors=%d timeouts=%d status=%v p50=%.2fms p99=%.2fms max=%.2fms send_lag_max=%.2fms\n",
			c.Name, c.Sent, c.Dropped, c.Completed, c.OK, c.OKPerS, c.ShareOK, c.ConnErrors, c.Timeouts, c.Status,
			c.Latency.P50, c.Latency.P99, c.Latency.Max, c.MaxSendLagMS)
	}
}
