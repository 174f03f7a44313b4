package registry

// Registry benchmarks B2 and B3 (docs/registry.md §10). Both run a real
// registry on a temporary data dir (bbolt and segment files on the OS file
// system, every write fsynced) whose genesis comes from trust roots of three
// fresh signers with quorum 3, and talk to it over loopback HTTP with
// registryapi.HTTPClient. Reported, never asserted. Full runs:
//
//	go test -run '^$' -bench CycleM3 -benchtime 5s ./roles/registry
//	go test -run '^$' -bench 'CommitThroughput/loops=8' -benchtime 30s ./roles/registry
//
// `go test -run '^$' -bench . -benchtime 1x ./roles/registry` is a fast
// smoke check of both.

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// benchQuorum is the M (and N) of the benchmarks' trust roots.
const benchQuorum = 3

// benchOpTimeout bounds every client call of a benchmark.
const benchOpTimeout = 10 * time.Second

// benchLoops is the number of competing client loops of B3.
const benchLoops = 8

// benchRig is a running on-disk registry with M = N = 3 and an HTTP
// client holding a propose, approve and commit token.
type benchRig struct {
	metrics *runtime.Metrics
	signers []signerKey
	cli     *registryapi.HTTPClient
}

// startBenchRig starts the rig; it is stopped when b ends.
func startBenchRig(b *testing.B) *benchRig {
	b.Helper()
	signers, err := benchSigners(benchQuorum)
	if err != nil {
		b.Fatal(err)
	}
	trPath, pin := writeBenchTrustRoots(b, signers)
	cfg := testConfig()
	cfg.TrustRoots, cfg.TrustRootsB3, cfg.AllowDevSigner = trPath, pin, false
	keys, err := auth.GenerateKeyring()
	if err != nil {
		b.Fatal(err)
	}
	met := runtime.NewMetrics(nil)
	r := New(Options{Config: cfg, Env: module.Env{DataDir: b.TempDir(), Log: zerolog.Nop(), Metrics: met, Keys: keys, Version: "bench", Bus: runtime.NewBus(nil)}})
	stop := runBenchRole(b, r)
	token, _, err := keys.Mint(auth.MintOptions{Scopes: []string{registryapi.ScopePropose, registryapi.ScopeApprove, registryapi.ScopeCommit},
		TTL: time.Hour})
	if err != nil {
		stop()
		b.Fatal(err)
	}
	cli := registryapi.NewHTTPClient("http://"+r.Addr(), func(context.Context) (string, error) { return token, nil },
		client.Options{Timeout: benchOpTimeout})
	b.Cleanup(func() {
		cli.Close()
		stop()
	})
	return &benchRig{metrics: met, signers: signers, cli: cli}
}

// runBenchRole starts r and runs it until the returned stop is called.
func runBenchRole(b *testing.B, r *Role) (stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // registry-bench-run: ends with ctx
	return func() {
		sctx, scancel := context.WithTimeout(context.Background(), benchOpTimeout)
		defer scancel()
		if err := r.Stop(sctx); err != nil {
			b.Errorf("Stop: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}
}

// benchSigners makes n fresh signers org:test#k1…kn.
func benchSigners(n int) ([]signerKey, error) {
	out := make([]signerKey, n)
	for i := range out {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		out[i] = signerKey{id: fmt.Sprintf("org:test#k%d", i+1), priv: priv}
	}
	return out, nil
}

// writeBenchTrustRoots writes a docs/registry.md §6 trust-roots file for signers with
// quorum benchQuorum and returns its path and b3 pin.
func writeBenchTrustRoots(b *testing.B, signers []signerKey) (path, pin string) {
	b.Helper()
	roots := make([]map[string]string, len(signers))
	for i, s := range signers {
		roots[i] = map[string]string{"id": s.id, "algo": "ed25519", "pubkey": s.pubB64()}
	}
	raw, err := json.Marshal(map[string]any{"schema_version": "1.0.0", "signers": roots,
		"quorum": map[string]int{"m": benchQuorum, "n": len(signers)}})
	if err != nil {
		b.Fatal(err)
	}
	path = filepath.Join(b.TempDir(), "trust-roots.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	canon, err := descriptor.Canonicalize(raw)
	if err != nil {
		b.Fatal(err)
	}
	return path, descriptor.PayloadB3(canon)
}

// cycle is one precomputed propose → approve ×M → commit.
type cycle struct {
	req       descriptor.ProposeRequest
	version   uint64
	approvals []descriptor.Approval
}

// newCycle builds and signs the set at version with prevHash and note:
// the rig's signers and quorum plus one tenant.
func (rig *benchRig) newCycle(version uint64, prevHash, note string, at time.Time) (cycle, *descriptor.Set, error) {
	items := make([]map[string]any, 0, len(rig.signers)+2)
	for _, s := range rig.signers {
		items = append(items, map[string]any{"kind": "signer", "id": s.id, "algo": "ed25519", "pubkey": s.pubB64()})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": benchQuorum, "n": len(rig.signers)},
		map[string]any{"kind": "tenant", "id": "tenant-1", "rps": 10, "burst": 5, "weight": 1, "max_bytes_per_s": 0})
	raw, err := json.Marshal(map[string]any{"version": version, "prev_hash": prevHash,
		"created_at": descriptor.FormatTime(at), "items": items, "note": note})
	if err != nil {
		return cycle{}, nil, err
	}
	set, err := descriptor.ParseSet(raw, descriptor.DefaultLimits(), time.Time{})
	if err != nil {
		return cycle{}, nil, err
	}
	c := cycle{version: version, req: descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: set.Canonical,
		PayloadB3: set.B3}}
	for _, s := range rig.signers[:benchQuorum] {
		c.approvals = append(c.approvals, descriptor.Sign(s.priv, s.id, set.B3, at))
	}
	return c, set, nil
}

// chain precomputes n cycles that extend HEAD one version each.
func (rig *benchRig) chain(ctx context.Context, n int) ([]cycle, error) {
	cctx, cancel := context.WithTimeout(ctx, benchOpTimeout)
	defer cancel()
	head, err := rig.cli.Head(cctx)
	if err != nil {
		return nil, err
	}
	out := make([]cycle, n)
	prev, now := head.PayloadB3, time.Now()
	for i := range out {
		c, set, err := rig.newCycle(head.Version+uint64(i)+1, prev, "bench-"+strconv.Itoa(i), now)
		if err != nil {
			return nil, err
		}
		out[i], prev = c, set.B3
	}
	return out, nil
}

// run proposes c, sends its approvals concurrently and commits it; each
// call is bounded by benchOpTimeout.
func (rig *benchRig) run(ctx context.Context, c cycle) (registryapi.Committed, error) {
	pctx, cancel := context.WithTimeout(ctx, benchOpTimeout)
	p, err := rig.cli.Propose(pctx, c.req)
	cancel()
	if err != nil {
		return registryapi.Committed{}, fmt.Errorf("propose v%d: %w", c.version, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, ap := range c.approvals {
		g.Go(func() error { // registry-bench-approve: one approval, joined by Wait
			actx, cancel := context.WithTimeout(gctx, benchOpTimeout)
			defer cancel()
			_, err := rig.cli.Approve(actx, p.ProposalID, ap)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return registryapi.Committed{}, fmt.Errorf("approve v%d: %w", c.version, err)
	}
	cctx, cancel := context.WithTimeout(ctx, benchOpTimeout)
	defer cancel()
	com, err := rig.cli.Commit(cctx, p.ProposalID)
	if err != nil {
		return registryapi.Committed{}, fmt.Errorf("commit v%d: %w", c.version, err)
	}
	return com, nil
}

// BenchmarkCycleM3 is B2: one client runs propose → 3 concurrent
// approvals → commit, one version after the other, over loopback HTTP with
// fsync. Every payload and signature is made before the timer starts.
// Reported: the cycle's p50, p95 and p99 in ms (goal p95 < 20 ms).
func BenchmarkCycleM3(b *testing.B) {
	rig := startBenchRig(b)
	cycles, err := rig.chain(b.Context(), b.N)
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for _, c := range cycles {
		start := time.Now()
		com, err := rig.run(b.Context(), c)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if com.Version != c.version {
			b.Fatalf("committed v%d, want v%d", com.Version, c.version)
		}
	}
	b.StopTimer()
	for _, q := range []struct {
		p    float64
		unit string
	}{{0.50, "p50-ms"}, {0.95, "p95-ms"}, {0.99, "p99-ms"}} {
		b.ReportMetric(ms(percentile(lat, q.p)), q.unit)
	}
}

// percentile is the nearest-rank p-quantile of d (d is sorted in place).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(math.Ceil(p*float64(len(d)))) - 1
	return d[max(i, 0)]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkCommitThroughput is B3: client loops compete to extend HEAD
// (read HEAD, propose the next version, 3 concurrent approvals, commit; a
// 409 chain_mismatch because another loop won starts over) until b.N
// versions are committed, so -benchtime sets the duration. loops=8 is the
// spec's B3; loops=1 (no competition) is the same work without the lost
// races, for reference. Reported: commits/s (goal ≥ 200); the median log
// and db fsync from ron_registry_fsync_seconds; the mean messages per
// group commit from ron_registry_group_commit_size; lost races, committer
// batches per commit and wall time per batch, so that
// commits/s = 1000 / (batches/commit × ms/batch).
func BenchmarkCommitThroughput(b *testing.B) {
	for _, loops := range []int{benchLoops, 1} {
		b.Run("loops="+strconv.Itoa(loops), func(b *testing.B) { benchThroughput(b, loops) })
	}
}

// benchThroughput runs B3 with loops client loops.
func benchThroughput(b *testing.B, loops int) {
	rig := startBenchRig(b)
	before := rig.histograms()
	var committed, lost atomic.Int64
	b.ResetTimer()
	start := time.Now()
	g, ctx := errgroup.WithContext(b.Context())
	for w := range loops {
		g.Go(func() error { // registry-bench-loop-<w>: joined by Wait
			return rig.compete(ctx, w, int64(b.N), &committed, &lost)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	after := rig.histograms()
	n := float64(committed.Load())
	b.ReportMetric(n/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(lost.Load())/n, "lost/commit")
	for _, f := range []string{"log", "db"} {
		b.ReportMetric(1000*after[f].minus(before[f]).quantile(0.5), "fsync-"+f+"-p50-ms")
	}
	batch := after["batch"].minus(before["batch"])
	b.ReportMetric(batch.mean(), "msgs/batch")
	b.ReportMetric(float64(batch.count())/n, "batches/commit")
	b.ReportMetric(ms(elapsed)/float64(batch.count()), "ms/batch")
}

// compete is one B3 client loop: it commits versions until the loops
// together have committed target, counting its lost races.
func (rig *benchRig) compete(ctx context.Context, w int, target int64, committed, lost *atomic.Int64) error {
	for i := 0; committed.Load() < target; i++ {
		hctx, cancel := context.WithTimeout(ctx, benchOpTimeout)
		head, err := rig.cli.Head(hctx)
		cancel()
		if err != nil {
			return err
		}
		c, _, err := rig.newCycle(head.Version+1, head.PayloadB3, fmt.Sprintf("loop-%d-%d", w, i), time.Now())
		if err != nil {
			return err
		}
		switch _, err := rig.run(ctx, c); {
		case err == nil:
			committed.Add(1)
		case isChainMismatch(err):
			lost.Add(1)
		default:
			return err
		}
	}
	return nil
}

// isChainMismatch reports a 409 chain_mismatch: another loop moved HEAD.
func isChainMismatch(err error) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Code == descriptor.CodeChainMismatch
}

// hist is a snapshot of one histogram: its non-zero vmrange buckets and
// its sum.
type hist struct {
	buckets map[string]uint64
	sum     float64
}

// histograms snapshots the fsync histograms ("log", "db") and the group
// commit size histogram ("batch") of the rig.
func (rig *benchRig) histograms() map[string]hist {
	vals := rig.metrics.Values()
	snap := func(name string, labels ...string) hist {
		h := hist{buckets: map[string]uint64{}}
		rig.metrics.Histogram(name, labels...).VisitNonZeroBuckets(func(r string, n uint64) { h.buckets[r] = n })
		h.sum = vals[runtime.MetricName(name+"_sum", labels...)]
		return h
	}
	return map[string]hist{
		"log":   snap("registry_fsync_seconds", "role", roleName, "file", "log"),
		"db":    snap("registry_fsync_seconds", "role", roleName, "file", "db"),
		"batch": snap("registry_group_commit_size", "role", roleName),
	}
}

// minus is h without the observations already in old.
func (h hist) minus(old hist) hist {
	out := hist{buckets: map[string]uint64{}, sum: h.sum - old.sum}
	for r, n := range h.buckets {
		if d := n - old.buckets[r]; d > 0 {
			out.buckets[r] = d
		}
	}
	return out
}

// count is the number of observations in h.
func (h hist) count() uint64 {
	var n uint64
	for _, c := range h.buckets {
		n += c
	}
	return n
}

// mean is the mean observation (NaN when h is empty).
func (h hist) mean() float64 { return h.sum / float64(h.count()) }

// quantile estimates the q-quantile of h by linear interpolation inside
// the vmrange bucket where it falls (NaN when h is empty).
func (h hist) quantile(q float64) float64 {
	type bucket struct {
		lo, hi float64
		n      uint64
	}
	bs := make([]bucket, 0, len(h.buckets))
	for r, n := range h.buckets {
		lo, hi, err := parseVMRange(r)
		if err != nil {
			return math.NaN()
		}
		bs = append(bs, bucket{lo, hi, n})
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmp.Compare(a.lo, b.lo) })
	rank, seen := q*float64(h.count()), 0.0
	for _, bk := range bs {
		if seen+float64(bk.n) >= rank {
			return bk.lo + (bk.hi-bk.lo)*(rank-seen)/float64(bk.n)
		}
		seen += float64(bk.n)
	}
	return math.NaN()
}

// parseVMRange parses a VictoriaMetrics bucket label "1.000e-03...1.136e-03".
func parseVMRange(r string) (lo, hi float64, err error) {
	a, b, ok := strings.Cut(r, "...")
	if !ok {
		return 0, 0, fmt.Errorf("vmrange %q: no \"...\"", r)
	}
	if lo, err = strconv.ParseFloat(a, 64); err != nil {
		return 0, 0, err
	}
	if hi, err = strconv.ParseFloat(b, 64); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

// TestBenchHistQuantile covers the benchmarks' histogram reader: bucket
// labels it cannot parse give NaN, and quantiles interpolate inside the
// bucket where they fall.
func TestBenchHistQuantile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buckets map[string]uint64
		q, want float64
	}{
		{"empty", map[string]uint64{}, 0.5, math.NaN()},
		{"no separator", map[string]uint64{"1.0e-03": 1}, 0.5, math.NaN()},
		{"bad low", map[string]uint64{"x...1.0e-03": 1}, 0.5, math.NaN()},
		{"bad high", map[string]uint64{"1.0e-03...y": 1}, 0.5, math.NaN()},
		{"one bucket", map[string]uint64{"1.0e+00...2.0e+00": 4}, 0.5, 1.5},
		{"second bucket", map[string]uint64{"1.0e+00...2.0e+00": 1, "2.0e+00...4.0e+00": 3}, 0.5, 2 + 2.0/3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hist{buckets: tc.buckets}.quantile(tc.q)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-9) {
				t.Fatalf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
	old := hist{buckets: map[string]uint64{"a": 2}, sum: 3}
	d := hist{buckets: map[string]uint64{"a": 2, "b": 5}, sum: 10}.minus(old)
	if d.count() != 5 || d.mean() != 7.0/5 {
		t.Fatalf("minus: count %d mean %v", d.count(), d.mean())
	}
}
