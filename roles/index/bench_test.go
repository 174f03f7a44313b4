package index

// Benchmarks of docs/index.md §16 (reported, never asserted; the wrk
// ratios against a trivial net/http handler live in scripts/bench/index.sh):
//
//	BenchmarkResolveCached  GET /resolve/{name} answered from the resolve
//	                        cache through the real Handlers and middleware
//	                        chain, in process (ServeHTTP) and over loopback
//	                        HTTP, each next to a constant-JSON reference
//	                        handler of the same body size.
//	BenchmarkResolveHedged  GET /resolve/{name} on a node that holds nothing,
//	                        with five in-process peers holding the records,
//	                        caches off: p50_ms and p99_ms with one peer
//	                        delayed by 1 s and with all peers fast.
//
// Smoke check: go test -run '^$' -bench . -benchtime 1x ./roles/index

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/memkv"
)

// Shape of the benchmark data set.
const (
	benchNames         = 16              // names (and targets) resolved in turn
	benchProviders     = 3               // provider records per target
	benchPeers         = 5               // in-process peers of BenchmarkResolveHedged
	benchPeerDelay     = time.Second     // delay of the slow peer
	benchProviderTTL   = 24 * time.Hour  // records outlive any run
	benchCacheTTL      = time.Hour       // cached answers outlive any run
	benchClientTimeout = 5 * time.Second // loopback client bound per request
)

// benchNode is one index node: Handlers over a memory KV behind the shared
// middleware chain (no listener; ServeHTTP or an httptest server serve it).
type benchNode struct {
	h   *Handlers
	srv *httpx.Server
}

func newBenchNode(tb testing.TB) *benchNode {
	tb.Helper()
	db, err := indexdb.Open(context.Background(), memkv.New(), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		tb.Fatal(err)
	}
	srv := httpx.NewServer(httpx.ServerOptions{Role: "index", Log: zerolog.Nop(), Metrics: metrics.NewSet(),
		Limits: httpx.DefaultIngress().Limits()})
	h := NewHandlers(db, keys, time.Now)
	h.Mount(srv.Echo())
	return &benchNode{h: h, srv: srv}
}

// benchName is the i-th benchmark name.
func benchName(i int) string { return "site-" + strconv.Itoa(i) + ".bench" }

// benchTarget is the i-th name's target id.
func benchTarget(i int) store.ID { return store.Sum([]byte("ron-bench-object-" + strconv.Itoa(i))) }

// seed stores every benchmark name and its provider records on n.
func (n *benchNode) seed(tb testing.TB) {
	tb.Helper()
	lc := NewLocalClient(n.h)
	ctx := context.Background()
	for i := range benchNames {
		if _, err := lc.SetName(ctx, benchName(i), benchTarget(i), indexapi.Cond{}); err != nil {
			tb.Fatal(err)
		}
		recs := make([]indexapi.Announcement, benchProviders)
		for j := range recs {
			node := "storage-" + strconv.Itoa(j)
			recs[j] = indexapi.Announcement{ID: benchTarget(i), Node: node, Addr: "http://" + node + ".bench:5303",
				Region: "eu-1", Type: manifestType, TTL: benchProviderTTL}
		}
		if _, _, err := lc.Announce(ctx, recs); err != nil {
			tb.Fatal(err)
		}
	}
}

// sinkWriter is a reusable ResponseWriter that keeps only the status and
// the byte count, so the harness adds as little as possible per request.
type sinkWriter struct {
	hdr  http.Header
	code int
	n    int
}

func newSinkWriter() *sinkWriter { return &sinkWriter{hdr: http.Header{}} }

func (w *sinkWriter) Header() http.Header { return w.hdr }

func (w *sinkWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *sinkWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

func (w *sinkWriter) reset() {
	clear(w.hdr)
	w.code, w.n = 0, 0
}

// serveOnce runs one in-process request against h and returns the status.
func serveOnce(h http.Handler, w *sinkWriter, r *http.Request) int {
	w.reset()
	h.ServeHTTP(w, r)
	return w.code
}

// constJSON is the reference: a trivial net/http handler writing body.
func constJSON(body []byte) http.Handler {
	size := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", size)
		_, _ = w.Write(body)
	})
}

// cachedNode is a seeded node with a resolve cache, warmed for benchName(0);
// it returns the node and the cached answer's body.
func cachedNode(b *testing.B) (*benchNode, []byte) {
	b.Helper()
	n := newBenchNode(b)
	n.seed(b)
	c, err := cache.New[[]byte](cache.Config{Entries: 1024, TTL: benchCacheTTL, NegTTL: benchCacheTTL})
	if err != nil {
		b.Fatal(err)
	}
	n.h.set(func(s *Settings) { s.Cache = c })
	path := "/resolve/" + benchName(0)
	for _, want := range []string{indexapi.SourceLocal, indexapi.SourceCache} {
		rec := httptest.NewRecorder()
		n.srv.Echo().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var a indexapi.ResolveAnswer
		if rec.Code != http.StatusOK || jsonUnmarshal(rec.Body.Bytes(), &a) != nil || a.Source != want {
			b.Fatalf("warm-up resolve: %d %s (want source %q)", rec.Code, rec.Body.Bytes(), want)
		}
		if want == indexapi.SourceCache {
			return n, rec.Body.Bytes()
		}
	}
	return n, nil
}

// BenchmarkResolveCached measures cached GET /resolve/{name}: the real
// Handlers behind the httpx middleware chain, in process and over loopback,
// each beside the constant-JSON reference of the same body size.
func BenchmarkResolveCached(b *testing.B) {
	n, body := cachedNode(b)
	path := "/resolve/" + benchName(0)
	b.Logf("cached answer: %d bytes", len(body))
	b.Run("handler", func(b *testing.B) { benchServeHTTP(b, n.srv.Echo(), path) })
	b.Run("handler_reference", func(b *testing.B) { benchServeHTTP(b, constJSON(body), path) })
	b.Run("loopback", func(b *testing.B) { benchLoopback(b, n.srv.Echo(), path) })
	b.Run("loopback_reference", func(b *testing.B) { benchLoopback(b, constJSON(body), path) })
}

// benchServeHTTP times in-process GETs of path on h.
func benchServeHTTP(b *testing.B, h http.Handler, path string) {
	w, r := newSinkWriter(), httptest.NewRequest(http.MethodGet, path, nil)
	b.ReportAllocs()
	for b.Loop() {
		if code := serveOnce(h, w, r); code != http.StatusOK {
			b.Fatalf("status %d", code)
		}
	}
}

// benchLoopback times GETs of path on h served by an httptest server, one
// keep-alive connection, body read to the end.
func benchLoopback(b *testing.B, h http.Handler, path string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: benchClientTimeout}
	url := srv.URL + path
	b.ReportAllocs()
	for b.Loop() {
		if err := getDrain(hc, url); err != nil {
			b.Fatal(err)
		}
	}
}

// getDrain GETs url, reads the body to the end and fails on non-200.
func getDrain(hc *http.Client, url string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return nil
}

// delayer is a handler that makes every request first wait d, or until
// the caller gives up (a cancelled hedge leg), whichever comes first. It
// counts the requests it saw.
type delayer struct {
	d    time.Duration
	next http.Handler
	seen atomic.Int64
}

func (h *delayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.seen.Add(1)
	t := time.NewTimer(h.d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return
	case <-t.C:
	}
	h.next.ServeHTTP(w, r)
}

// hedgedCluster starts benchPeers seeded peers on loopback, the first slow
// of them delayed by benchPeerDelay, and returns an empty node asking them
// with the docs/index.md §6 defaults (α 3, β 2, hedge 150 ms, budget 1200 ms) and no
// cache, and the delayed peers' handlers. Everything is closed at the
// benchmark's cleanup.
func hedgedCluster(b *testing.B, slow int) (*benchNode, []*delayer) {
	b.Helper()
	urls := make([]string, benchPeers)
	var slowPeers []*delayer
	for i := range urls {
		p := newBenchNode(b)
		p.seed(b)
		var h http.Handler = p.srv.Echo()
		if i < slow {
			d := &delayer{d: benchPeerDelay, next: h}
			slowPeers = append(slowPeers, d)
			h = d
		}
		s := httptest.NewServer(h)
		b.Cleanup(s.Close)
		urls[i] = s.URL
	}
	hp, err := NewHedgedPeers(urls, hedge.Options{},
		client.Options{Timeout: hedge.DefaultDeadline, Retries: -1, Role: "index"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(hp.Close) // runs before the servers close (LIFO)
	asker := newBenchNode(b)
	asker.h.set(func(s *Settings) { s.Peers = hp })
	return asker, slowPeers
}

// noCacheRequests returns one GET /resolve/{name} per benchmark name, each
// with Cache-Control: no-cache.
func noCacheRequests() []*http.Request {
	reqs := make([]*http.Request, benchNames)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/resolve/"+benchName(i), nil)
		reqs[i].Header.Set("Cache-Control", "no-cache")
	}
	return reqs
}

// warmHedged resolves every request once (opening the peer connections)
// and checks each answer came from the peers, complete.
func warmHedged(b *testing.B, h http.Handler, reqs []*http.Request) {
	b.Helper()
	for _, r := range reqs {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var a indexapi.ResolveAnswer
		if rec.Code != http.StatusOK || jsonUnmarshal(rec.Body.Bytes(), &a) != nil ||
			a.Source != indexapi.SourcePeer || len(a.Providers) != benchProviders || a.Partial {
			b.Fatalf("warm-up %s: %d %s", r.URL.Path, rec.Code, rec.Body.Bytes())
		}
	}
}

// BenchmarkResolveHedged measures GET /resolve/{name} answered by five
// in-process peers (the asking node holds nothing, caches off), with one
// peer delayed by 1 s and with all fast. It reports the latency percentiles
// p50_ms and p99_ms (docs/index.md §16 goal: p99 ≤ hedge_ms + 50 ms = 200 ms), max_ms, and
// slow_legs/op: lookup legs that reached the delayed peer per resolve (each
// resolve makes two lookups, the name's and its providers').
func BenchmarkResolveHedged(b *testing.B) {
	for _, v := range []struct {
		name string
		slow int
	}{{"one_delayed", 1}, {"all_fast", 0}} {
		b.Run(v.name, func(b *testing.B) {
			asker, slowPeers := hedgedCluster(b, v.slow)
			h, reqs := asker.srv.Echo(), noCacheRequests()
			warmHedged(b, h, reqs)
			seen0 := legsSeen(slowPeers)
			w := newSinkWriter()
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				code := serveOnce(h, w, reqs[i%len(reqs)])
				lat = append(lat, time.Since(start))
				if code != http.StatusOK {
					b.Fatalf("resolve %s: status %d", reqs[i%len(reqs)].URL.Path, code)
				}
			}
			reportLatency(b, lat)
			b.ReportMetric(float64(legsSeen(slowPeers)-seen0)/float64(len(lat)), "slow_legs/op")
		})
	}
}

// legsSeen sums the requests the delayed peers saw.
func legsSeen(ds []*delayer) int64 {
	var n int64
	for _, d := range ds {
		n += d.seen.Load()
	}
	return n
}

// reportLatency reports the nearest-rank p50, p99 and the maximum of lat in
// milliseconds.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50_ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99_ms")
	b.ReportMetric(ms(percentile(lat, 1)), "max_ms")
}

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted; 0 when
// it is empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
