package verify

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv/memkv"
)

// The fixture builds a registry log in-process with the server's own
// packages (descriptor, tiles) and serves the docs/registry.md §2 read routes the verifier
// uses. It is test scaffolding: the verifier itself never imports tiles.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const signerID = "org:test#k1"

// testKey is the fixed signer key of every fixture log.
var testKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

// edits tamper with a log while it is built, so the tampered leaves are
// what the tiles and checkpoint cover (the semantic checks must catch
// them). payload edits run before signing, artifact edits after.
type edits struct {
	payload  func(v uint64, p map[string]any)
	artifact func(v uint64, a *descriptor.Artifact)
}

// cached holds one unedited log, built once and shared read-only.
var cached struct {
	once   sync.Once
	leaves [][]byte
}

// cachedLeaves returns the first n (≤ 600) leaves of the shared unedited
// log.
func cachedLeaves(t testing.TB, n int) [][]byte {
	t.Helper()
	cached.once.Do(func() { cached.leaves = buildLeaves(t, 600, edits{}) })
	if len(cached.leaves) < n {
		t.Fatalf("cached log has %d leaves, want %d", len(cached.leaves), n)
	}
	return cached.leaves[:n:n]
}

// buildLeaves returns n consecutive artifacts: genesis (testKey, 1 of 1)
// then sets each adding a tenant, approved by testKey.
func buildLeaves(t testing.TB, n int, e edits) [][]byte {
	t.Helper()
	pub := testKey.Public().(ed25519.PublicKey)
	tr := descriptor.TrustRoots{Signers: []descriptor.Signer{{ID: signerID, Algo: descriptor.AlgoEd25519,
		Pubkey: pub, PubkeyB64: base64.StdEncoding.EncodeToString(pub)}}, Quorum: descriptor.Quorum{M: 1, N: 1}}
	g, err := descriptor.Genesis(tr, t0)
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([][]byte, 0, n)
	prev := g
	leaves = append(leaves, encode(t, e, 0, descriptor.Artifact{SchemaVersion: descriptor.ArtifactSchemaVersion,
		Payload: g.Canonical, PayloadB3: g.B3, PrevHash: descriptor.ZeroHash, CommittedAt: g.CreatedAt}))
	for v := uint64(1); v < uint64(n); v++ {
		set := nextSet(t, e, v, prev, pub)
		at := t0.Add(time.Duration(v) * time.Second)
		a := descriptor.Artifact{SchemaVersion: descriptor.ArtifactSchemaVersion, Version: v, Payload: set.Canonical,
			PayloadB3: set.B3, PrevHash: set.PrevHash, CommittedAt: descriptor.FormatTime(at),
			Approvals: []descriptor.Approval{descriptor.Sign(testKey, signerID, set.B3, at)}}
		leaves = append(leaves, encode(t, e, v, a))
		prev = set
	}
	return leaves
}

// nextSet builds version v on top of prev.
func nextSet(t testing.TB, e edits, v uint64, prev *descriptor.Set, pub ed25519.PublicKey) *descriptor.Set {
	t.Helper()
	p := map[string]any{
		"version": v, "prev_hash": prev.B3,
		"created_at": descriptor.FormatTime(t0.Add(time.Duration(v) * time.Second)),
		"items": []any{
			map[string]any{"kind": "signer", "id": signerID, "algo": "ed25519", "pubkey": base64.StdEncoding.EncodeToString(pub)},
			map[string]any{"kind": "quorum", "id": "quorum", "m": 1, "n": 1},
			map[string]any{"kind": "tenant", "id": "t-" + strconv.FormatUint(v, 10), "rps": 10, "burst": 5, "weight": 1, "max_bytes_per_s": 0},
		},
	}
	if e.payload != nil {
		e.payload(v, p)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	set, err := descriptor.ParseSet(raw, descriptor.DefaultLimits(), time.Time{})
	if err != nil {
		t.Fatalf("version %d: %v", v, err)
	}
	return set
}

// encode applies the artifact edit and returns the canonical bytes
// (edits that EncodeArtifact refuses are encoded with JCS directly).
func encode(t testing.TB, e edits, v uint64, a descriptor.Artifact) []byte {
	t.Helper()
	if e.artifact != nil {
		e.artifact(v, &a)
	}
	b, err := descriptor.EncodeArtifact(a)
	if err == nil {
		return b
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err = descriptor.Canonicalize(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hooks alter what the fixture serves (nil: serve the log as built).
type hooks struct {
	bundle     func(n uint64, b []byte) []byte
	tile       func(level uint8, n uint64, b []byte) []byte
	checkpoint func(b []byte) []byte
	artifact   func(v uint64, b []byte) []byte
	head       func(h map[string]any)
	gone       func(path string) bool // answer 410 for this tile path
}

// fixture is a log behind an httptest server.
type fixture struct {
	key      *tiles.LogKey
	leaves   [][]byte
	tree     *tiles.Tree
	minIndex uint64
	hooks    hooks
	srv      *httptest.Server
}

// newFixture serves leaves, all covered by the checkpoint (appended in
// chunks of at most 300 so several checkpoints are signed on the way).
func newFixture(t testing.TB, leaves [][]byte) *fixture {
	t.Helper()
	key, err := tiles.NewLogKey("")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{key: key}
	f.reset(t, leaves)
	f.srv = httptest.NewServer(f.routes())
	t.Cleanup(f.srv.Close)
	return f
}

// reset replaces the log (same key) with leaves.
func (f *fixture) reset(t testing.TB, leaves [][]byte) {
	t.Helper()
	tree, err := tiles.OpenTree(context.Background(), memkv.New(), f.key)
	if err != nil {
		t.Fatal(err)
	}
	f.tree, f.leaves = tree, nil
	f.extend(t, leaves)
}

// extend appends leaves and signs checkpoints over them.
func (f *fixture) extend(t testing.TB, leaves [][]byte) {
	t.Helper()
	for len(leaves) > 0 {
		n := min(300, len(leaves))
		if _, err := f.tree.Append(context.Background(), leaves[:n]); err != nil {
			t.Fatal(err)
		}
		f.leaves, leaves = append(f.leaves, leaves[:n]...), leaves[n:]
	}
}

// options are verify Options for the fixture, pinned to its key.
func (f *fixture) options() Options {
	return Options{URL: f.srv.URL, LogKey: f.key.VerifierKey(), HTTP: f.srv.Client()}
}

func (f *fixture) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /registry/log/checkpoint", func(w http.ResponseWriter, _ *http.Request) {
		write(w, "text/plain; charset=utf-8", apply(f.hooks.checkpoint, f.tree.Checkpoint().Note))
	})
	mux.HandleFunc("GET /registry/log/key", func(w http.ResponseWriter, _ *http.Request) {
		write(w, "text/plain", []byte(f.key.VerifierKey()+"\n"))
	})
	mux.HandleFunc("GET /registry/log/tile/{path...}", f.serveTile)
	mux.HandleFunc("GET /registry/status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"min_index": f.minIndex, "head": f.head()})
	})
	mux.HandleFunc("GET /registry/head", func(w http.ResponseWriter, _ *http.Request) {
		h := f.head()
		if f.hooks.head != nil {
			f.hooks.head(h)
		}
		writeJSON(w, h)
	})
	mux.HandleFunc("GET /registry/{v}", func(w http.ResponseWriter, r *http.Request) {
		v, err := strconv.ParseUint(r.PathValue("v"), 10, 64)
		switch {
		case err != nil:
			httpx.WriteError(w, "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "bad version"))
		case v >= uint64(len(f.leaves)):
			httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "beyond HEAD"))
		case v < f.minIndex:
			httpx.WriteError(w, "", httpx.NewError(http.StatusGone, httpx.CodeGone, "pruned"))
		default:
			b := f.leaves[v]
			if f.hooks.artifact != nil {
				b = f.hooks.artifact(v, b)
			}
			write(w, "application/json", b)
		}
	})
	return mux
}

// head is the /registry/head body of the fixture's last leaf.
func (f *fixture) head() map[string]any {
	a, _ := descriptor.ParseArtifact(f.leaves[len(f.leaves)-1])
	return map[string]any{"version": a.Version, "payload_b3": a.PayloadB3, "committed_at": a.CommittedAt}
}

// serveTile serves hash tiles and entry bundles the checkpoint covers,
// 410 for those wholly below min_index.
func (f *fixture) serveTile(w http.ResponseWriter, r *http.Request) {
	p, err := tiles.ParseTilePath(r.PathValue("path"))
	if err != nil {
		httpx.WriteError(w, "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "bad tile path"))
		return
	}
	size := f.tree.Size()
	// The C2SP end index of any tile, full or partial: (N+1)·256^(L+1).
	end := (p.Index + 1) << (tiles.TileHeight * (uint(p.Level) + 1))
	switch {
	case f.hooks.gone != nil && f.hooks.gone(r.PathValue("path")):
		httpx.WriteError(w, "", httpx.NewError(http.StatusGone, httpx.CodeGone, "pruned"))
	case !p.Covered(size):
		httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "beyond the checkpoint"))
	case end <= f.minIndex:
		httpx.WriteError(w, "", httpx.NewError(http.StatusGone, httpx.CodeGone, "pruned"))
	case p.Entries:
		lo := p.Index * tiles.TileWidth
		hi := lo + uint64(p.Width)
		if p.Width == 0 {
			hi = lo + tiles.TileWidth
		}
		write(w, "application/octet-stream", apply2(f.hooks.bundle, p.Index, tiles.EntryBundle(f.leaves[lo:hi])))
	default:
		b, err := f.tree.Tile(p.Level, p.Index, p.Width)
		if err != nil {
			httpx.WriteError(w, "", err)
			return
		}
		if f.hooks.tile != nil {
			b = f.hooks.tile(p.Level, p.Index, b)
		}
		write(w, "application/octet-stream", b)
	}
}

func apply(h func([]byte) []byte, b []byte) []byte {
	if h == nil {
		return b
	}
	return h(b)
}

func apply2(h func(uint64, []byte) []byte, n uint64, b []byte) []byte {
	if h == nil {
		return b
	}
	return h(n, b)
}

func write(w http.ResponseWriter, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	write(w, "application/json", b)
}
