package registry

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// fastVerifier removes the deep verifier's pauses for the rest of the
// test (call it before starting a role).
func fastVerifier(t *testing.T) {
	old := slicePause
	slicePause = 0
	t.Cleanup(func() { slicePause = old })
}

// waitLimit bounds every wait of a test for a worker's progress.
const waitLimit = 20 * time.Second

// signerKey is a test signer.
type signerKey struct {
	id   string
	priv ed25519.PrivateKey
}

// newSigners makes n fresh signers org:test#k1…kn.
func newSigners(t *testing.T, n int) []signerKey {
	t.Helper()
	out := make([]signerKey, n)
	for i := range out {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = signerKey{id: fmt.Sprintf("org:test#k%d", i+1), priv: priv}
	}
	return out
}

// pubB64 is a signer's std base64 public key.
func (s signerKey) pubB64() string {
	return base64.StdEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
}

// writeTrustRoots writes a docs/registry.md §6 trust-roots file for signers with quorum m
// into dir and returns its path and its b3 pin.
func writeTrustRoots(t *testing.T, dir string, signers []signerKey, m int) (string, string) {
	t.Helper()
	type root struct {
		ID     string `json:"id"`
		Algo   string `json:"algo"`
		Pubkey string `json:"pubkey"`
	}
	roots := make([]root, len(signers))
	for i, s := range signers {
		roots[i] = root{ID: s.id, Algo: "ed25519", Pubkey: s.pubB64()}
	}
	raw, err := json.MarshalIndent(map[string]any{"schema_version": "1.0.0", "signers": roots,
		"quorum": map[string]int{"m": m, "n": len(signers)}}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trust-roots.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	canon, err := descriptor.Canonicalize(raw)
	if err != nil {
		t.Fatal(err)
	}
	return path, descriptor.PayloadB3(canon)
}

// testConfig is the default config on a free port with retention off (the
// tests drive retention rounds themselves).
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.RetentionPolicy = PolicyOff
	return cfg
}

// testOptions are Options for cfg with fresh keys and metrics; amnesia
// unless dataDir is set.
func testOptions(t *testing.T, cfg Config, dataDir string) Options {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: cfg, Env: module.Env{DataDir: dataDir, Amnesia: dataDir == "", Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil), Keys: keys, Version: "test", Bus: runtime.NewBus(nil), Ops: func(e *echo.Echo) {
		e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	}}}
}

// node is a started, running registry role.
type node struct {
	*Role
	t       *testing.T
	client  *httpapi.LocalClient
	signers []signerKey // the keys that approve (the dev signer in dev mode)
	m       int         // approvals per commit
	http    *http.Client
	stop    func()
}

// startNode starts a role with opt; it is stopped at the end of the test
// (or earlier by calling stop). signers and m approve its commits; with no
// signers the dev signer does.
func startNode(t *testing.T, opt Options, signers []signerKey, m int) *node {
	t.Helper()
	r := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	n := &node{Role: r, t: t, client: httpapi.NewLocalClient(r.API()), signers: signers, m: m,
		http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	if len(signers) == 0 {
		id, key, ok := r.DevSigner()
		if !ok {
			t.Fatal("no signers and no dev signer")
		}
		n.signers, n.m = []signerKey{{id: id, priv: key}}, 1
	}
	stopped := false
	n.stop = func() {
		if stopped {
			return
		}
		stopped = true
		n.http.CloseIdleConnections()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := r.Stop(sctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(n.stop)
	return n
}

// nextPayload is a DescriptorSet extending head: its signers and quorum
// plus one tenant item carrying note in its id.
func nextPayload(t *testing.T, head *descriptor.Set, note string, now time.Time) json.RawMessage {
	t.Helper()
	items := make([]map[string]any, 0, len(head.Signers)+2)
	for _, s := range head.Signers {
		items = append(items, map[string]any{"kind": "signer", "id": s.ID, "algo": s.Algo, "pubkey": s.PubkeyB64})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": head.Quorum.M, "n": head.Quorum.N},
		map[string]any{"kind": "tenant", "id": "tenant-1", "rps": 10, "burst": 5, "weight": 1, "max_bytes_per_s": 0})
	raw, err := json.Marshal(map[string]any{"version": head.Version + 1, "prev_hash": head.B3,
		"created_at": descriptor.FormatTime(now), "items": items, "note": note})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// commit runs propose → m approvals → commit for the next version. On a
// node on the control plane each call is repeated while it answers 503
// no_quorum (an election under load; every call is idempotent), within
// waitLimit.
func (n *node) commit(note string) registryapi.Committed {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	head := n.com.Head()
	var p registryapi.Proposed
	n.untilQuorum(ctx, "propose", func() (err error) {
		p, err = n.client.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0",
			Payload: nextPayload(n.t, head.Set, note, time.Now())})
		return err
	})
	for _, s := range n.signers[:n.m] {
		sig := descriptor.Sign(s.priv, s.id, p.PayloadB3, time.Now())
		n.untilQuorum(ctx, "approve by "+s.id, func() error {
			_, err := n.client.Approve(ctx, p.ProposalID, sig)
			if he := httpx.AsError(err); err != nil && he.Code == httpx.CodeDuplicateApproval {
				return nil // an earlier attempt landed
			}
			return err
		})
	}
	var c registryapi.Committed
	n.untilQuorum(ctx, "commit", func() (err error) {
		c, err = n.client.Commit(ctx, p.ProposalID)
		return err
	})
	return c
}

// untilQuorum calls fn until it does not answer 503 no_quorum, polling
// every 20 ms until ctx ends; any other error fails the test.
func (n *node) untilQuorum(ctx context.Context, what string, fn func() error) {
	n.t.Helper()
	for {
		err := fn()
		if err == nil {
			return
		}
		if httpx.AsError(err).Code != httpx.CodeNoQuorum || !runtime.Sleep(ctx, 20*time.Millisecond) {
			n.t.Fatalf("%s: %v", what, err)
		}
	}
}

// get fetches a path from the role's listener.
func (n *node) get(path string) (int, []byte) {
	n.t.Helper()
	resp, err := n.http.Get("http://" + n.Addr() + path)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		n.t.Fatal(err)
	}
	return resp.StatusCode, body
}

// status fetches and decodes GET /registry/status.
func (n *node) statusBody() registryapi.Status {
	n.t.Helper()
	code, body := n.get("/registry/status")
	if code != http.StatusOK {
		n.t.Fatalf("status: %d %s", code, body)
	}
	var s registryapi.Status
	if err := json.Unmarshal(body, &s); err != nil {
		n.t.Fatal(err)
	}
	return s
}

// waitFor waits on sig until cond holds (bounded by waitLimit).
func waitFor(t *testing.T, sig *signal, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for {
		ch := sig.changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitCovered waits until the checkpoint covers HEAD.
func (n *node) waitCovered() {
	n.t.Helper()
	waitFor(n.t, n.ckpt.progress, "the checkpoint to cover HEAD", func() bool {
		return n.tree.Size() == n.com.Head().Version+1
	})
}

// waitVerified waits until the deep verifier has verified HEAD.
func (n *node) waitVerified() {
	n.t.Helper()
	n.waitCovered()
	waitFor(n.t, n.ver.progress, "the verifier to reach HEAD", func() bool {
		return n.ver.Through() >= int64(n.com.Head().Version)
	})
}

// metric reads one series of the role's metrics.
func (n *node) metric(name string) float64 {
	return n.opt.Metrics.Values()[name]
}

// seedLog writes a log of versions 0…last straight into dataDir's
// segment files (one fsync): a registry that starts over it rolls HEAD
// forward. See seedRecords.
func seedLog(t *testing.T, dataDir string, signers []signerKey, m int, last uint64, segRecords int) {
	t.Helper()
	l, _, err := segment.Open(filepath.Join(dataDir, regstore.DirName, regstore.LogDirName),
		segment.Options{SegmentRecords: segRecords, DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(seedRecords(t, signers, m, last)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// seedRecords are the records of versions 0…last: genesis from the trust
// roots (signers, quorum m), then sets signed by the first m signers,
// committed one millisecond apart from an hour ago. Version v's payload
// carries the note "seed-<v>".
func seedRecords(t *testing.T, signers []signerKey, m int, last uint64) []segment.Record {
	t.Helper()
	tr := descriptor.TrustRoots{Quorum: descriptor.Quorum{M: m, N: len(signers)}}
	for _, s := range signers {
		pub := s.priv.Public().(ed25519.PublicKey)
		tr.Signers = append(tr.Signers, descriptor.Signer{ID: s.id, Algo: "ed25519", Pubkey: pub, PubkeyB64: s.pubB64()})
	}
	start := time.Now().Add(-time.Hour)
	g, err := descriptor.Genesis(tr, start)
	if err != nil {
		t.Fatal(err)
	}
	recs := []segment.Record{{Version: 0, Artifact: encodeArtifact(t, g, nil, g.CreatedAt)}}
	prev := g
	for v := uint64(1); v <= last; v++ {
		at := start.Add(time.Duration(v) * time.Millisecond)
		set, err := descriptor.ParseSet(nextPayload(t, prev, fmt.Sprintf("seed-%d", v), at), descriptor.DefaultLimits(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var aps []descriptor.Approval
		for _, s := range signers[:m] {
			aps = append(aps, descriptor.Sign(s.priv, s.id, set.B3, at))
		}
		recs = append(recs, segment.Record{Version: v, Artifact: encodeArtifact(t, set, aps, descriptor.FormatTime(at))})
		prev = set
	}
	return recs
}

// encodeArtifact is the canonical artifact of set.
func encodeArtifact(t *testing.T, set *descriptor.Set, aps []descriptor.Approval, committedAt string) []byte {
	t.Helper()
	if aps == nil {
		aps = []descriptor.Approval{}
	}
	b, err := descriptor.EncodeArtifact(descriptor.Artifact{SchemaVersion: descriptor.ArtifactSchemaVersion,
		Version: set.Version, Payload: set.Canonical, PayloadB3: set.B3, Approvals: aps, PrevHash: set.PrevHash,
		CommittedAt: committedAt})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
