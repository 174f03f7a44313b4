package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// failoverConfig is the parsed failover command line.
type failoverConfig struct {
	admins  []string // admin listeners host:port, one per server
	indexes []string // index base URLs, in the same order
	pids    []int    // process ids, in the same order
	token   string   // bearer token with index:write
	name    string   // the name the writer writes
	run     int      // picks the writer's node among the non-leaders
	timeout time.Duration
	pause   time.Duration // after a refused or failed write
	honor   bool          // pause at least the answer's Retry-After
	warmup  time.Duration // writing before the kill
	limit   time.Duration // give up when no write is acknowledged this long after the kill
	every   time.Duration // status poll period of the survivors
	// registry: each write is a registry cycle (propose HEAD+1, approve
	// to quorum, commit) through -index, which lists registry URLs.
	registry bool
	signers  regSigners
}

// parseFailover parses the failover flags.
func parseFailover(args []string) (failoverConfig, error) {
	fs := flag.NewFlagSet("failover", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg failoverConfig
	var admins, indexes, pids string
	fs.StringVar(&admins, "admin", "", "comma-separated admin listeners host:port, one per server (required)")
	fs.StringVar(&indexes, "index", "", "comma-separated index base URLs, in -admin order (required)")
	fs.StringVar(&pids, "pid", "", "comma-separated process ids, in -admin order (required)")
	fs.StringVar(&cfg.token, "token", "", "bearer token with index:write (required)")
	fs.StringVar(&cfg.name, "name", "failover", "the name written")
	fs.IntVar(&cfg.run, "run", 0, "run number: the writer's node is non-leader number run mod (servers-1)")
	fs.DurationVar(&cfg.timeout, "timeout", time.Second, "client timeout of one write")
	fs.DurationVar(&cfg.pause, "pause", 10*time.Millisecond, "pause after a write that was not acknowledged")
	fs.BoolVar(&cfg.honor, "honor-retry-after", false, "after a refusal, wait at least its Retry-After (as a polite client would)")
	fs.DurationVar(&cfg.warmup, "warmup", time.Second, "writing before the kill")
	fs.DurationVar(&cfg.limit, "limit", time.Minute, "give up when nothing is acknowledged this long after the kill")
	fs.DurationVar(&cfg.every, "every", 10*time.Millisecond, "status poll period of the survivors")
	var signers string
	fs.StringVar(&signers, "registry-signers", "", "registry mode: the signers file of cpbench regkeys; -index lists registry URLs, "+
		"-token has the registry write scopes, and each write is a propose → approve to quorum → commit cycle")
	if err := fs.Parse(args); err != nil {
		return failoverConfig{}, err
	}
	if fs.NArg() > 0 {
		return failoverConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.admins, err = splitAdmins(admins); err != nil {
		return failoverConfig{}, fmt.Errorf("-admin: %w", err)
	}
	if cfg.indexes, err = splitURLs(indexes); err != nil {
		return failoverConfig{}, fmt.Errorf("-index: %w", err)
	}
	for _, p := range strings.Split(pids, ",") {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 1 {
			return failoverConfig{}, fmt.Errorf("-pid %q: not a process id", p)
		}
		cfg.pids = append(cfg.pids, n)
	}
	switch {
	case len(cfg.admins) < 3:
		return failoverConfig{}, fmt.Errorf("-admin: %d servers; a failover needs at least 3", len(cfg.admins))
	case len(cfg.indexes) != len(cfg.admins) || len(cfg.pids) != len(cfg.admins):
		return failoverConfig{}, fmt.Errorf("-admin, -index and -pid list %d, %d and %d nodes", len(cfg.admins), len(cfg.indexes), len(cfg.pids))
	case cfg.token == "":
		return failoverConfig{}, fmt.Errorf("-token is required")
	case !validName(cfg.name):
		return failoverConfig{}, fmt.Errorf("-name %q: want [a-z0-9-], 1–63 characters", cfg.name)
	case cfg.run < 0:
		return failoverConfig{}, fmt.Errorf("-run %d: want ≥ 0", cfg.run)
	case cfg.timeout <= 0 || cfg.timeout > time.Minute:
		return failoverConfig{}, fmt.Errorf("-timeout %s: want (0, 1m]", cfg.timeout)
	case cfg.pause < 0 || cfg.pause > time.Second:
		return failoverConfig{}, fmt.Errorf("-pause %s: want [0, 1s]", cfg.pause)
	case cfg.warmup <= 0 || cfg.warmup > time.Minute:
		return failoverConfig{}, fmt.Errorf("-warmup %s: want (0, 1m]", cfg.warmup)
	case cfg.limit <= 0 || cfg.limit > maxTimeout:
		return failoverConfig{}, fmt.Errorf("-limit %s: want (0, %s]", cfg.limit, maxTimeout)
	case cfg.every < time.Millisecond || cfg.every > time.Second:
		return failoverConfig{}, fmt.Errorf("-every %s: want 1ms–1s", cfg.every)
	}
	if signers != "" {
		cfg.registry = true
		if cfg.signers, err = loadSigners(signers); err != nil {
			return failoverConfig{}, fmt.Errorf("-registry-signers: %w", err)
		}
	}
	return cfg, nil
}

// validName is a one-label name of docs/index.md §3 (enough for this tool).
func validName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// splitURLs parses a comma-separated list of http(s) base URLs.
func splitURLs(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("at least one URL is required")
	}
	var out []string
	for _, u := range strings.Split(s, ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("%q is not an http(s) URL", u)
		}
		out = append(out, u)
	}
	return out, nil
}

// failoverResult is one failover's summary; times are ms since the kill
// (-1: not seen).
type failoverResult struct {
	OldLeader    string  `json:"old_leader"`
	Writer       string  `json:"writer"` // the node the writes went through
	NewLeader    string  `json:"new_leader"`
	FailoverMs   float64 `json:"failover_ms"`    // kill → first 200 of a write sent after it
	LeaderLostMs float64 `json:"leader_lost_ms"` // a survivor stopped naming the old leader
	ElectedMs    float64 `json:"elected_ms"`     // a survivor reported itself leader
	WriterKnowMs float64 `json:"writer_knows_ms"`
	// LastFailMs is when the last refused or failed write after the
	// kill ended; AckStartMs when the acknowledged one was sent.
	LastFailMs  float64           `json:"last_fail_ms"`
	AckStartMs  float64           `json:"ack_start_ms"`
	AckLatMs    float64           `json:"ack_latency_ms"` // that write's own round trip
	BeforeKill  int               `json:"writes_before_kill"`
	BeforeP50Ms float64           `json:"before_kill_p50_ms"`
	Attempts    int               `json:"attempts_after_kill"` // writes sent after the kill, the acknowledged one included
	Failures    map[string]int    `json:"failures"`            // those not acknowledged, by kind
	Samples     map[string]string `json:"failure_samples"`     // the first answer or error of each kind
	Version     int               `json:"version"`             // the acknowledged write's version
}

// killFunc kills a process (SIGKILL in the tool, a fake in tests).
type killFunc func(pid int) error

// runFailover runs one failover.
func runFailover(ctx context.Context, cfg failoverConfig, kill killFunc) (failoverResult, error) {
	sc, done := newStatusClient(time.Second)
	defer done()
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: 2, DisableCompression: true})
	defer tr.CloseIdleConnections()
	return failover(ctx, cfg, httpStatus(sc), &http.Client{Transport: tr, Timeout: cfg.timeout}, kill)
}

// attempt is one write of the failover writer.
type attempt struct {
	start, end time.Time
	ok         bool
	kind       string // failure kind when !ok
	detail     string // what the failure said
	version    int
}

// failover is runFailover with its dependencies given.
func failover(ctx context.Context, cfg failoverConfig, fetch statusFetcher, hc *http.Client, kill killFunc) (failoverResult, error) {
	lr, err := waitLeader(ctx, leaderConfig{admins: cfg.admins, timeout: 30 * time.Second, every: 20 * time.Millisecond}, fetch)
	if err != nil {
		return failoverResult{}, err
	}
	li := lr.LeaderPos
	var others []int
	for i := range cfg.admins {
		if i != li {
			others = append(others, i)
		}
	}
	wi := others[cfg.run%len(others)]
	res := failoverResult{OldLeader: lr.Leader, Writer: lr.IDs[wi], Failures: map[string]int{}, Samples: map[string]string{},
		FailoverMs: -1, LeaderLostMs: -1, ElectedMs: -1, WriterKnowMs: -1, LastFailMs: -1, AckStartMs: -1}

	wctx, stopWriter := context.WithCancel(ctx)
	defer stopWriter()
	w := &failWriter{cfg: cfg, hc: hc, url: cfg.indexes[wi] + "/names/" + cfg.name, acked: make(chan struct{})}
	if cfg.registry {
		w.do = regCycles(cfg, hc, cfg.indexes[wi])
	}
	var wg sync.WaitGroup
	wg.Go(func() { w.loop(wctx) })
	defer wg.Wait()

	// Warm up: the writer must have written before the kill.
	deadline := time.Now().Add(cfg.warmup + 10*time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if n, _ := w.counts(); n > 0 && time.Since(w.first()) >= cfg.warmup {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := w.counts(); n == 0 {
		stopWriter()
		return failoverResult{}, fmt.Errorf("no write acknowledged through %s before the kill: %s", res.Writer, w.lastFailure())
	}

	// Watch the survivors, kill the leader.
	pctx, stopPolls := context.WithCancel(ctx)
	defer stopPolls()
	obs := &observer{old: lr.Leader, writer: res.Writer}
	var pg sync.WaitGroup
	killAt := time.Now()
	for _, i := range others {
		pg.Go(func() { obs.poll(pctx, cfg.admins[i], fetch, cfg.every, killAt) })
	}
	w.setKill(killAt)
	if err := kill(cfg.pids[li]); err != nil {
		stopPolls()
		pg.Wait()
		stopWriter()
		return failoverResult{}, fmt.Errorf("kill %d: %w", cfg.pids[li], err)
	}
	select {
	case <-w.acked:
	case <-time.After(cfg.limit):
	case <-ctx.Done():
	}
	stopWriter()
	wg.Wait()
	// Give the pollers one more round, so the writer's view is seen even
	// when the write was faster than a poll.
	time.Sleep(2 * cfg.every)
	stopPolls()
	pg.Wait()

	since := func(t time.Time) float64 { return float64(t.Sub(killAt).Microseconds()) / 1000 }
	var before []time.Duration
	w.mu.Lock()
	defer w.mu.Unlock()
	var ack *attempt
	for i := range w.log {
		a := &w.log[i]
		switch {
		case a.start.Before(killAt):
			if a.ok && a.end.Before(killAt) {
				before = append(before, a.end.Sub(a.start))
			}
		case a.ok && ack == nil:
			ack = a
			res.Attempts++
			res.Version = a.version
		case ack == nil:
			res.Attempts++
			res.Failures[a.kind]++
			if _, ok := res.Samples[a.kind]; !ok {
				res.Samples[a.kind] = a.detail
			}
			res.LastFailMs = since(a.end)
		}
	}
	res.BeforeKill = len(before)
	res.BeforeP50Ms = ms(percentile(before, 0.5))
	if ack == nil {
		return res, fmt.Errorf("no write acknowledged within %s of the kill (failures %v, last: %s)", cfg.limit, res.Failures, w.lastFailureLocked())
	}
	res.FailoverMs, res.AckStartMs, res.AckLatMs = since(ack.end), since(ack.start), ms(ack.end.Sub(ack.start))
	obs.mu.Lock()
	defer obs.mu.Unlock()
	res.NewLeader = obs.newLeader
	for _, p := range []struct {
		at  time.Time
		out *float64
	}{{obs.lost, &res.LeaderLostMs}, {obs.elected, &res.ElectedMs}, {obs.writerKnows, &res.WriterKnowMs}} {
		if !p.at.IsZero() {
			*p.out = since(p.at)
		}
	}
	return res, nil
}

// failWriter is the failover's writer: one request at a time.
type failWriter struct {
	cfg   failoverConfig
	hc    *http.Client
	url   string
	acked chan struct{} // closed at the first 200 of a write sent after the kill
	// do replaces put when set (registry mode).
	do func(ctx context.Context, i int) (version int, kind, detail string, retryAfter time.Duration)

	mu       sync.Mutex
	log      []attempt
	killAt   time.Time
	lastFail string
}

func (w *failWriter) setKill(t time.Time) {
	w.mu.Lock()
	w.killAt = t
	w.mu.Unlock()
}

// counts is how many writes were acknowledged and sent so far.
func (w *failWriter) counts() (ok, all int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.log {
		if a.ok {
			ok++
		}
	}
	return ok, len(w.log)
}

// first is when the first acknowledged write ended.
func (w *failWriter) first() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.log {
		if a.ok {
			return a.end
		}
	}
	return time.Now()
}

func (w *failWriter) lastFailure() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastFailureLocked()
}

func (w *failWriter) lastFailureLocked() string {
	if w.lastFail == "" {
		return "none"
	}
	return w.lastFail
}

// loop writes until ctx ends or a write sent after the kill is
// acknowledged.
func (w *failWriter) loop(ctx context.Context) {
	for i := 1; ctx.Err() == nil; i++ {
		start := time.Now()
		put := w.put
		if w.do != nil {
			put = w.do
		}
		version, kind, detail, retryAfter := put(ctx, i)
		end := time.Now()
		if ctx.Err() != nil {
			return // cut short by the end of the run: not a result
		}
		w.mu.Lock()
		w.log = append(w.log, attempt{start: start, end: end, ok: kind == "", kind: kind, detail: detail, version: version})
		done := kind == "" && !w.killAt.IsZero() && !start.Before(w.killAt)
		if kind != "" {
			w.lastFail = detail
		}
		w.mu.Unlock()
		if done {
			close(w.acked)
			return
		}
		pause := w.cfg.pause
		if w.cfg.honor {
			pause = max(pause, retryAfter)
		}
		if kind != "" && pause > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
	}
}

// put sends one unconditional PUT; kind is "" when it was acknowledged,
// else what happened (detail says more; retryAfter is a refusal's
// Retry-After).
func (w *failWriter) put(ctx context.Context, i int) (version int, kind, detail string, retryAfter time.Duration) {
	body := fmt.Sprintf(`{"b3":"b3:%064x"}`, i)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, w.url, strings.NewReader(body))
	if err != nil {
		return 0, "request", err.Error(), 0
	}
	req.Header.Set("Authorization", "Bearer "+w.cfg.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.hc.Do(req)
	if err != nil {
		return 0, transportKind(err), err.Error(), 0
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, transportKind(err), err.Error(), 0
	}
	if resp.StatusCode == http.StatusOK {
		var rec struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal(data, &rec); err != nil || rec.Version < 1 {
			return 0, "bad_answer", fmt.Sprintf("200 with %.200q", data), 0
		}
		return rec.Version, "", "", 0
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 && s <= 3600 {
		retryAfter = time.Duration(s) * time.Second
	}
	return 0, refusalKind(resp.StatusCode, data), fmt.Sprintf("%d %.300s", resp.StatusCode, bytes.TrimSpace(data)), retryAfter
}

// transportKind names a failure without an answer.
func transportKind(err error) string {
	var te interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &te) && te.Timeout():
		return "client_timeout"
	case strings.Contains(err.Error(), "connection refused"):
		return "refused"
	}
	return "transport"
}

// refusalKind names an error answer: its status, code and outcome
// ("503 no_quorum unknown").
func refusalKind(status int, body []byte) string {
	var env struct {
		Error *struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	kind := strconv.Itoa(status)
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		kind += " " + env.Error.Code
		if o, ok := env.Error.Details["outcome"].(string); ok {
			kind += " " + o
		}
	}
	return kind
}

// observer records, from the survivors' status polls, when the old leader
// was first not named, when a survivor first said it leads and when the
// writer's node first named the new leader.
type observer struct {
	old, writer string

	mu                         sync.Mutex
	lost, elected, writerKnows time.Time
	newLeader                  string
}

// poll reads admin's status every period until ctx ends (polls before
// killAt are not recorded).
func (o *observer) poll(ctx context.Context, admin string, fetch statusFetcher, every time.Duration, killAt time.Time) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		t0 := time.Now()
		st, err := fetch(ctx, admin)
		at := t0.Add(time.Since(t0) / 2) // the state was read somewhere in the round trip
		if err == nil && at.After(killAt) {
			o.see(st, at)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// see records one status read at t.
func (o *observer) see(st cpStatus, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if st.Leader != o.old && o.lost.IsZero() {
		o.lost = t
	}
	if st.State == "leader" && o.elected.IsZero() {
		o.elected, o.newLeader = t, st.ID
	}
	if st.ID == o.writer && st.Leader != "" && st.Leader != o.old && o.writerKnows.IsZero() {
		o.writerKnows = t
		if o.newLeader == "" {
			o.newLeader = st.Leader
		}
	}
}

// regCycles is the registry-mode write of the failover writer: one whole
// cycle on the HEAD it last knew (read again after a failure), so "a write
// sent after the kill" is a cycle whose propose was sent after it.
func regCycles(cfg failoverConfig, hc *http.Client, base string) func(ctx context.Context, i int) (int, string, string, time.Duration) {
	w := &regWriter{cfg: regConfig{token: cfg.token, signers: cfg.signers, prefix: "failover-" + strconv.Itoa(cfg.run)}, hc: hc, base: base, fails: map[string]int{}}
	var head *regHead
	return func(ctx context.Context, i int) (int, string, string, time.Duration) {
		if head == nil {
			h, st := w.readHead(ctx)
			if !st.ok {
				return 0, st.kind, st.detail, st.retry
			}
			head = h
		}
		st, _ := w.cycle(ctx, head, i)
		switch {
		case st.ok:
			head = st.head
			return int(st.head.Version), "", "", 0
		case st.lost && st.head != nil:
			head = st.head
		default:
			head = nil
		}
		return 0, st.kind, st.detail, st.retry
	}
}
