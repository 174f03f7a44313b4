package index

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/cache"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
	"github.com/ronhq/ron/store/kv/memkv"
)

// cnode is one cluster-mode index node made of Handlers behind the shared
// middleware chain on an httptest listener, with its own membership View.
type cnode struct {
	id    string
	h     *Handlers
	db    *indexdb.DB
	met   *runtime.Metrics
	mem   *cluster.Static
	peers *ownership.Peers
	plane *consensus.Plane // the node's control plane: the names log
	ts    *httptest.Server

	e    http.Handler   // the routes behind the middleware chain
	down atomic.Bool    // drop every connection
	mu   sync.Mutex     // guards seen
	seen map[string]int // "METHOD path" → requests served
}

// serve counts the request and hands it to the handlers, or drops the
// connection when the node is down.
func (n *cnode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n.down.Load() {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	n.mu.Lock()
	n.seen[r.Method+" "+r.URL.Path]++
	n.mu.Unlock()
	n.e.ServeHTTP(w, r)
}

// count returns how many "METHOD path" requests the node served.
func (n *cnode) count(key string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seen[key]
}

// ctest is a set of cnodes sharing one root key.
type ctest struct {
	t      *testing.T
	keys   *auth.Keyring
	node   func(ctx context.Context) (string, error) // node-to-node token source
	writer string                                    // index:write token
	nodes  map[string]*cnode
	ids    []string
}

// newCTest starts nodes ids (all index members, alive) with R replicas,
// and one control-plane group of them all (every node a voter).
func newCTest(t *testing.T, r int, ids ...string) *ctest {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	ct := &ctest{t: t, keys: keys, node: auth.TokenSource(keys, cluster.NodeScopes(false)...),
		nodes: map[string]*cnode{}, ids: ids}
	ct.writer = ct.token(indexapi.ScopeWrite)
	for _, id := range ids {
		ct.nodes[id] = ct.newNode(id, r)
	}
	ct.setViews(nil)
	planes := make([]*consensus.Plane, len(ids))
	for i, id := range ids {
		planes[i] = ct.nodes[id].plane
	}
	consensustest.Planes(t, ids, planes)
	return ct
}

// leader is the id of the node that leads the names log now, once every
// running node knows it.
func (ct *ctest) leader() string {
	ct.t.Helper()
	var id string
	consensustest.Eventually(ct.t, "a leader every node knows", func() bool {
		seen := map[string]bool{}
		for _, n := range ct.nodes {
			if n.plane.Group() != nil {
				l, _ := n.plane.Leader()
				seen[l] = true
				id = l
			}
		}
		return len(seen) == 1 && id != ""
	})
	return id
}

// follower is the id of a node that does not lead the names log.
func (ct *ctest) follower() string {
	l := ct.leader()
	for _, id := range ct.ids {
		if id != l {
			return id
		}
	}
	ct.t.Fatal("no follower")
	return ""
}

// waitApplied polls until every running node's database holds name at
// version v (the log is applied everywhere, not only where it was
// acknowledged).
func (ct *ctest) waitApplied(name string, v uint64) {
	ct.t.Helper()
	consensustest.Eventually(ct.t, fmt.Sprintf("%s version %d everywhere", name, v), func() bool {
		for _, n := range ct.nodes {
			if n.plane.Group() == nil {
				continue
			}
			if rec, err := n.db.History(context.Background(), name); err != nil || rec[0].Version != v {
				return false
			}
		}
		return true
	})
}

// token mints a one-hour token with scopes.
func (ct *ctest) token(scopes ...string) string {
	ct.t.Helper()
	tok, _, err := ct.keys.Mint(auth.MintOptions{Scopes: scopes, TTL: time.Hour})
	if err != nil {
		ct.t.Fatal(err)
	}
	return tok
}

// newNode builds and starts one node.
func (ct *ctest) newNode(id string, r int) *cnode {
	t := ct.t
	db, err := indexdb.Open(context.Background(), memkv.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	met := runtime.NewMetrics(nil)
	c, err := cache.New[[]byte](cache.Config{Entries: 100, TTL: time.Minute, NegTTL: time.Minute, Metrics: met})
	if err != nil {
		t.Fatal(err)
	}
	n := &cnode{id: id, db: db, met: met, seen: map[string]int{},
		mem: cluster.NewStatic(cluster.NewView(id, nil, time.Time{}))}
	n.peers = ownership.NewPeers(ownership.PeerOptions{Membership: n.mem, Replicas: r, Token: ct.node, Metrics: met,
		Lookup: hedge.Options{Metrics: met, Role: roleName}})
	n.h = NewHandlers(db, ct.keys, nil)
	n.h.Metrics = met
	n.plane = consensus.NewPlane()
	n.plane.Register(consensus.KindNames, n.h.enableCluster(n.peers, n.plane, func(err error) { t.Errorf("%s: fatal: %v", id, err) }, met))
	n.h.Reconfigure(Settings{Peers: n.peers, Cache: c})
	srv := httpx.NewServer(httpx.ServerOptions{Role: roleName, Log: zerolog.Nop(), Metrics: met.Set(),
		Limits: httpx.DefaultIngress().Limits()})
	n.h.Mount(srv.Echo())
	n.e = srv.Echo()
	n.ts = httptest.NewServer(n)
	t.Cleanup(func() {
		n.ts.Close()
		n.peers.Close()
	})
	return n
}

// members are the Views' members: every node alive unless states says
// otherwise.
func (ct *ctest) members(states map[string]cluster.State) []cluster.Member {
	var ms []cluster.Member
	for _, id := range ct.ids {
		st := states[id]
		if st == "" {
			st = cluster.StateAlive
		}
		ms = append(ms, cluster.Member{ID: id, Roles: []string{roleName}, State: st, Since: time.Now(),
			URLs: map[string]string{roleName: ct.nodes[id].ts.URL}})
	}
	return ms
}

// setViews gives every node the same View with the given states.
func (ct *ctest) setViews(states map[string]cluster.State) {
	ms := ct.members(states)
	for _, id := range ct.ids {
		ct.nodes[id].mem.Set(cluster.NewView(id, ms, time.Now()))
	}
}

// do sends one request to node id and returns status, headers and body.
func (ct *ctest) do(id, method, path, body, token string, hdr map[string]string) (int, http.Header, string) {
	ct.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ct.nodes[id].ts.URL+path, rd)
	if err != nil {
		ct.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := cl.Do(req)
	if err != nil {
		ct.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// put sets name to target through node id with the writer token.
func (ct *ctest) put(id, name, target string, hdr map[string]string) (int, string) {
	ct.t.Helper()
	code, _, body := ct.do(id, "PUT", "/names/"+name, `{"b3":"`+target+`"}`, ct.writer, hdr)
	return code, body
}

// local returns node id's own record of name.
func (ct *ctest) local(id, name string) (indexdb.Record, error) {
	return ct.nodes[id].db.Get(context.Background(), name)
}

// metric returns one series' value on node id.
func (ct *ctest) metric(id, series string) float64 {
	return ct.nodes[id].met.Values()[series]
}
