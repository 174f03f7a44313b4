package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// regSigners is the file regkeys writes and reg reads: the signers whose
// keys approve every version, and the quorum of the trust roots.
type regSigners struct {
	M       int         `json:"m"`
	Signers []regSigner `json:"signers"`
}

// regSigner is one signer with its private key seed (base64).
type regSigner struct {
	ID   string `json:"id"`
	Seed string `json:"seed"`
	priv ed25519.PrivateKey
}

func (s regSigner) pubB64() string {
	return base64.StdEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
}

// regKeysConfig is the parsed regkeys command line.
type regKeysConfig struct {
	dir  string
	n, m int
}

// parseRegKeys parses the regkeys flags.
func parseRegKeys(args []string) (regKeysConfig, error) {
	fs := flag.NewFlagSet("regkeys", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg regKeysConfig
	fs.StringVar(&cfg.dir, "dir", "", "directory to write trust-roots.json and signers.json into (required)")
	fs.IntVar(&cfg.n, "n", 3, "signers")
	fs.IntVar(&cfg.m, "m", 3, "quorum")
	if err := fs.Parse(args); err != nil {
		return regKeysConfig{}, err
	}
	switch {
	case fs.NArg() > 0:
		return regKeysConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.dir == "":
		return regKeysConfig{}, fmt.Errorf("-dir is required")
	case cfg.n < 1 || cfg.n > 32 || cfg.m < 1 || cfg.m > cfg.n:
		return regKeysConfig{}, fmt.Errorf("-m %d -n %d: want 1 ≤ m ≤ n ≤ 32", cfg.m, cfg.n)
	}
	return cfg, nil
}

// regKeysResult names the files written.
type regKeysResult struct {
	TrustRoots string `json:"trust_roots"`
	Signers    string `json:"signers"`
}

// runRegKeys makes n fresh signers org:bench#k1…kn and writes the trust
// roots (docs/registry.md §6) and the private signers file.
func runRegKeys(cfg regKeysConfig) (regKeysResult, error) {
	ss := regSigners{M: cfg.m}
	var roots []map[string]string
	for i := range cfg.n {
		seed := make([]byte, ed25519.SeedSize)
		_, _ = rand.Read(seed)
		s := regSigner{ID: fmt.Sprintf("org:bench#k%d", i+1), Seed: base64.StdEncoding.EncodeToString(seed), priv: ed25519.NewKeyFromSeed(seed)}
		ss.Signers = append(ss.Signers, s)
		roots = append(roots, map[string]string{"id": s.ID, "algo": descriptor.AlgoEd25519, "pubkey": s.pubB64()})
	}
	tr, err := json.Marshal(map[string]any{"schema_version": "1.0.0", "signers": roots, "quorum": map[string]int{"m": cfg.m, "n": cfg.n}})
	if err != nil {
		return regKeysResult{}, err
	}
	sj, err := json.Marshal(ss)
	if err != nil {
		return regKeysResult{}, err
	}
	res := regKeysResult{TrustRoots: filepath.Join(cfg.dir, "trust-roots.json"), Signers: filepath.Join(cfg.dir, "signers.json")}
	if err := os.WriteFile(res.TrustRoots, tr, 0o644); err != nil {
		return regKeysResult{}, err
	}
	if err := os.WriteFile(res.Signers, sj, 0o600); err != nil {
		return regKeysResult{}, err
	}
	return res, nil
}

// loadSigners reads a regkeys signers file.
func loadSigners(path string) (regSigners, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return regSigners{}, err
	}
	var ss regSigners
	if err := json.Unmarshal(raw, &ss); err != nil {
		return regSigners{}, fmt.Errorf("%s: %w", path, err)
	}
	if ss.M < 1 || ss.M > len(ss.Signers) {
		return regSigners{}, fmt.Errorf("%s: quorum %d of %d signers", path, ss.M, len(ss.Signers))
	}
	for i, s := range ss.Signers {
		seed, err := base64.StdEncoding.DecodeString(s.Seed)
		if err != nil || len(seed) != ed25519.SeedSize {
			return regSigners{}, fmt.Errorf("%s: signer %s: bad seed", path, s.ID)
		}
		ss.Signers[i].priv = ed25519.NewKeyFromSeed(seed)
	}
	return ss, nil
}

// regConfig is the parsed reg command line.
type regConfig struct {
	urls     []string // registry base URLs; writer i uses urls[i mod len]
	token    string   // registry:propose, registry:approve, registry:commit
	signers  regSigners
	c        int
	duration time.Duration
	prefix   string // notes are PREFIX-writer-iteration (every payload differs)
	timeout  time.Duration
	pause    time.Duration // after a step that failed (not a lost race)
}

// parseReg parses the reg flags.
func parseReg(args []string) (regConfig, error) {
	fs := flag.NewFlagSet("reg", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg regConfig
	var urls, signers string
	fs.StringVar(&urls, "url", "", "comma-separated registry base URLs (required)")
	fs.StringVar(&cfg.token, "token", "", "bearer token with registry:propose, registry:approve, registry:commit (required)")
	fs.StringVar(&signers, "signers", "", "signers file written by cpbench regkeys (required)")
	fs.IntVar(&cfg.c, "c", 8, "concurrent writers racing for HEAD+1")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long to write")
	fs.StringVar(&cfg.prefix, "prefix", "reg", "note prefix (use a new one per run)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "client timeout of one request")
	fs.DurationVar(&cfg.pause, "pause", 10*time.Millisecond, "pause after a step that failed (not after a lost race)")
	if err := fs.Parse(args); err != nil {
		return regConfig{}, err
	}
	if fs.NArg() > 0 {
		return regConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.urls, err = splitURLs(urls); err != nil {
		return regConfig{}, fmt.Errorf("-url: %w", err)
	}
	switch {
	case cfg.token == "":
		return regConfig{}, fmt.Errorf("-token is required")
	case signers == "":
		return regConfig{}, fmt.Errorf("-signers is required")
	case cfg.c < 1 || cfg.c > maxWorkers:
		return regConfig{}, fmt.Errorf("-c %d: want 1–%d", cfg.c, maxWorkers)
	case cfg.duration <= 0 || cfg.duration > maxTimeout:
		return regConfig{}, fmt.Errorf("-duration %s: want (0, %s]", cfg.duration, maxTimeout)
	case cfg.prefix == "" || len(cfg.prefix) > 200:
		return regConfig{}, fmt.Errorf("-prefix: want 1–200 bytes")
	case cfg.timeout <= 0 || cfg.timeout > time.Minute:
		return regConfig{}, fmt.Errorf("-timeout %s: want (0, 1m]", cfg.timeout)
	case cfg.pause < 0 || cfg.pause > time.Second:
		return regConfig{}, fmt.Errorf("-pause %s: want [0, 1s]", cfg.pause)
	}
	if cfg.signers, err = loadSigners(signers); err != nil {
		return regConfig{}, fmt.Errorf("-signers: %w", err)
	}
	return cfg, nil
}

// regResult is the reg summary. A cycle is propose → M approvals (at
// once) → commit of HEAD+1; commits counts the acknowledged (201) ones.
type regResult struct {
	Writers     int               `json:"writers"`
	URLs        int               `json:"urls"`
	Seconds     float64           `json:"seconds"`
	Commits     int               `json:"commits"`
	CommitsPerS float64           `json:"commits_per_s"`
	P50Ms       float64           `json:"p50_ms"` // cycle: propose sent → commit acknowledged
	P90Ms       float64           `json:"p90_ms"`
	P99Ms       float64           `json:"p99_ms"`
	MaxMs       float64           `json:"max_ms"`
	CommitP50Ms float64           `json:"commit_call_p50_ms"` // the commit request alone
	CommitP99Ms float64           `json:"commit_call_p99_ms"`
	Lost        int               `json:"lost_races"` // 409 chain_mismatch at any step
	LostPerC    float64           `json:"lost_per_commit"`
	HeadReads   int               `json:"head_reads"`
	StaleReads  int               `json:"stale_head_reads"` // a re-read HEAD behind the 409's head_version
	FirstV      uint64            `json:"first_version"`
	LastV       uint64            `json:"last_version"`
	Failures    map[string]int    `json:"failures"`
	Samples     map[string]string `json:"failure_samples"` // the first answer or error of each kind
	LastFail    string            `json:"last_failure,omitempty"`
}

// runReg runs the writers for cfg.duration.
func runReg(ctx context.Context, cfg regConfig) (regResult, error) {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: 4 * cfg.c, DisableCompression: true})
	defer tr.CloseIdleConnections()
	return regLoad(ctx, cfg, &http.Client{Transport: tr, Timeout: cfg.timeout})
}

// regLoad is runReg with the client given.
func regLoad(ctx context.Context, cfg regConfig, hc *http.Client) (regResult, error) {
	res := regResult{Writers: cfg.c, URLs: len(cfg.urls), Failures: map[string]int{}, Samples: map[string]string{}}
	var mu sync.Mutex
	var lat, clat []time.Duration
	start := time.Now()
	end := start.Add(cfg.duration)
	var wg sync.WaitGroup
	for i := range cfg.c {
		wg.Go(func() {
			w := &regWriter{cfg: cfg, hc: hc, base: cfg.urls[i%len(cfg.urls)], id: i, fails: map[string]int{}, samples: map[string]string{}}
			w.loop(ctx, end)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, w.lat...)
			clat = append(clat, w.clat...)
			res.Lost += w.lost
			res.HeadReads += w.reads
			res.StaleReads += w.stale
			for k, v := range w.fails {
				res.Failures[k] += v
			}
			for k, v := range w.samples {
				if _, ok := res.Samples[k]; !ok {
					res.Samples[k] = v
				}
			}
			if w.last != "" {
				res.LastFail = w.last
			}
			for _, v := range w.versions {
				if res.FirstV == 0 || v < res.FirstV {
					res.FirstV = v
				}
				res.LastV = max(res.LastV, v)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return regResult{}, err
	}
	took := time.Since(start)
	if len(lat) == 0 {
		return regResult{}, fmt.Errorf("no commit acknowledged in %s (lost races %d, failures %v; last: %s)", cfg.duration, res.Lost, res.Failures, res.LastFail)
	}
	slices.Sort(lat)
	res.Seconds, res.Commits = took.Seconds(), len(lat)
	res.CommitsPerS = float64(len(lat)) / took.Seconds()
	res.LostPerC = float64(res.Lost) / float64(len(lat))
	res.P50Ms, res.P90Ms = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.90))
	res.P99Ms, res.MaxMs = ms(percentile(lat, 0.99)), ms(percentile(lat, 1))
	res.CommitP50Ms, res.CommitP99Ms = ms(percentile(clat, 0.50)), ms(percentile(clat, 0.99))
	return res, nil
}

// regHead is a HEAD as the registry names it.
type regHead struct {
	Version   uint64 `json:"version"`
	PayloadB3 string `json:"payload_b3"`
}

// regWriter is one racing writer.
type regWriter struct {
	cfg  regConfig
	hc   *http.Client
	base string
	id   int

	lat, clat    []time.Duration
	versions     []uint64
	lost         int
	reads, stale int
	fails        map[string]int
	samples      map[string]string
	last         string
}

// regStep is the outcome of one request: ok, a lost race (409
// chain_mismatch, with the HEAD it named when it did) or a failure.
type regStep struct {
	ok     bool
	lost   bool
	head   *regHead // a chain_mismatch's details, or the commit's answer
	kind   string
	detail string
	retry  time.Duration // a refusal's Retry-After
	id     string        // propose: the proposal id
}

// loop runs cycles until end.
func (w *regWriter) loop(ctx context.Context, end time.Time) {
	var head *regHead
	for i := 1; ctx.Err() == nil && time.Now().Before(end); i++ {
		if head == nil {
			h, st := w.readHead(ctx)
			if !st.ok {
				w.fail(ctx, st)
				continue
			}
			head = h
		}
		t0 := time.Now()
		st, tc := w.cycle(ctx, head, i)
		switch {
		case ctx.Err() != nil:
			return
		case st.ok:
			w.lat = append(w.lat, time.Since(t0))
			w.clat = append(w.clat, tc)
			w.versions = append(w.versions, st.head.Version)
			head = st.head // the committed version is HEAD as the leader knows it
		case st.lost:
			w.lost++
			// Re-read HEAD; a node that relays to the leader answers reads
			// from its own stores, which may not have applied the HEAD
			// the 409 named: take the newer.
			h, rs := w.readHead(ctx)
			switch {
			case !rs.ok:
				head = st.head
			case st.head != nil && st.head.Version > h.Version:
				w.stale++
				head = st.head
			default:
				head = h
			}
		default:
			head = nil
			w.fail(ctx, st)
		}
	}
}

// fail counts a failed step and pauses.
func (w *regWriter) fail(ctx context.Context, st regStep) {
	w.fails[st.kind]++
	w.last = st.detail
	if _, ok := w.samples[st.kind]; !ok && w.samples != nil {
		w.samples[st.kind] = st.detail
	}
	if w.cfg.pause > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(w.cfg.pause):
		}
	}
}

// cycle proposes HEAD+1 on head, sends the quorum's approvals at once and
// commits; on success st.head is the committed version. tc is the commit
// request's own latency.
func (w *regWriter) cycle(ctx context.Context, head *regHead, i int) (st regStep, tc time.Duration) {
	now := time.Now()
	req, approvals, err := buildCycle(w.cfg.signers, head, fmt.Sprintf("%s-%d-%d", w.cfg.prefix, w.id, i), now)
	if err != nil {
		return regStep{kind: "build", detail: err.Error()}, 0
	}
	st = w.post(ctx, "/registry/proposals", req, http.StatusAccepted)
	if !st.ok {
		return st, 0
	}
	id := st.id
	steps := make([]regStep, len(approvals))
	var wg sync.WaitGroup
	for k, ap := range approvals {
		wg.Go(func() { steps[k] = w.post(ctx, "/registry/approvals/"+id, ap, http.StatusOK) })
	}
	wg.Wait()
	for _, s := range steps {
		if !s.ok && !(s.kind == "409 duplicate_approval") {
			return s, 0
		}
	}
	t0 := time.Now()
	st = w.post(ctx, "/registry/commit/"+id, nil, http.StatusCreated)
	return st, time.Since(t0)
}

// buildCycle makes the set at head.Version+1 (the signers, the quorum and
// one tenant, with note) and the quorum's approvals of it.
func buildCycle(ss regSigners, head *regHead, note string, now time.Time) (descriptor.ProposeRequest, []descriptor.Approval, error) {
	items := make([]map[string]any, 0, len(ss.Signers)+2)
	for _, s := range ss.Signers {
		items = append(items, map[string]any{"kind": "signer", "id": s.ID, "algo": descriptor.AlgoEd25519, "pubkey": s.pubB64()})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": ss.M, "n": len(ss.Signers)},
		map[string]any{"kind": "tenant", "id": "tenant-1", "rps": 10, "burst": 5, "weight": 1, "max_bytes_per_s": 0})
	raw, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.PayloadB3,
		"created_at": descriptor.FormatTime(now), "items": items, "note": note})
	if err != nil {
		return descriptor.ProposeRequest{}, nil, err
	}
	canon, err := descriptor.Canonicalize(raw)
	if err != nil {
		return descriptor.ProposeRequest{}, nil, err
	}
	b3 := descriptor.PayloadB3(canon)
	req := descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: canon, PayloadB3: b3}
	var aps []descriptor.Approval
	for _, s := range ss.Signers[:ss.M] {
		aps = append(aps, descriptor.Sign(s.priv, s.ID, b3, now))
	}
	return req, aps, nil
}

// readHead reads GET /registry/head of the writer's node.
func (w *regWriter) readHead(ctx context.Context) (*regHead, regStep) {
	w.reads++
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/registry/head", nil)
	if err != nil {
		return nil, regStep{kind: "request", detail: err.Error()}
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return nil, regStep{kind: transportKind(err), detail: err.Error()}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, regStep{kind: transportKind(err), detail: err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, regStep{kind: "head " + refusalKind(resp.StatusCode, data), detail: fmt.Sprintf("GET head: %d %.300s", resp.StatusCode, data)}
	}
	var h regHead
	if err := json.Unmarshal(data, &h); err != nil || !descriptor.IsB3(h.PayloadB3) {
		return nil, regStep{kind: "bad_answer", detail: fmt.Sprintf("GET head: %.200s", data)}
	}
	return &h, regStep{ok: true}
}

// post sends one registry write (body nil: no body) and sorts the answer.
func (w *regWriter) post(ctx context.Context, path string, body any, want int) regStep {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return regStep{kind: "request", detail: err.Error()}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.base+path, rd)
	if err != nil {
		return regStep{kind: "request", detail: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+w.cfg.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return regStep{kind: transportKind(err), detail: err.Error()}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return regStep{kind: transportKind(err), detail: err.Error()}
	}
	if resp.StatusCode == want {
		var ok struct {
			ProposalID string `json:"proposal_id"`
			regHead
		}
		if err := json.Unmarshal(data, &ok); err != nil {
			return regStep{kind: "bad_answer", detail: fmt.Sprintf("POST %s: %.200s", path, data)}
		}
		st := regStep{ok: true, id: ok.ProposalID}
		if want == http.StatusCreated {
			st.head = &ok.regHead
		}
		return st
	}
	st := regStep{kind: refusalKind(resp.StatusCode, data), detail: fmt.Sprintf("POST %s: %d %.300s", path, resp.StatusCode, bytes.TrimSpace(data))}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 && s <= 3600 {
		st.retry = time.Duration(s) * time.Second
	}
	if resp.StatusCode == http.StatusConflict {
		var env struct {
			Error struct {
				Code    string `json:"code"`
				Details struct {
					Version *uint64 `json:"head_version"`
					B3      string  `json:"head_payload_b3"`
				} `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &env) == nil && env.Error.Code == descriptor.CodeChainMismatch {
			st.lost = true
			if env.Error.Details.Version != nil && descriptor.IsB3(env.Error.Details.B3) {
				st.head = &regHead{Version: *env.Error.Details.Version, PayloadB3: env.Error.Details.B3}
			}
		}
	}
	return st
}
