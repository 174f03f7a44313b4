package ownership

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/peerlookup"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// Node-to-node call budgets (decided here; docs/cluster.md §6 is silent).
const (
	// replicaTimeout bounds one POST /replica/* call (Peers.Post).
	replicaTimeout = 2 * time.Second
	// ForwardTimeout bounds a forwarded name write: the primary's local
	// transaction plus its replica calls, within the listeners' 5 s write
	// timeout. It is also the write clients' timeout.
	ForwardTimeout = replicaTimeout + 2*time.Second
)

// PeerOptions configure NewPeers.
type PeerOptions struct {
	// Membership is the cluster's membership.
	Membership cluster.Membership
	// Self is this node's id ("" = the View's Self).
	Self string
	// Replicas is index_replicas (R): owners per key.
	Replicas int
	// Lookup tunes the hedged lookups (docs/index.md §6).
	Lookup hedge.Options
	// Breaker is the per-peer lookup breaker of docs/index.md §6.
	Breaker client.BreakerOptions
	// Token mints the node-to-node bearer (the node's Node.Token).
	Token func(context.Context) (string, error)
	// Metrics receives the clients' metrics with role="index".
	Metrics *runtime.Metrics
}

// Peers is the cluster-mode peer source of the index (docs/cluster.md §6,
// docs/index.md §6) and the index's node-to-node client set. For every
// alive index member but this node it keeps, per member URL, a lookup client
// with the docs/index.md §6 peer breaker and a write client (forwarded name writes and
// /replica/* calls, its breaker counting only 5xx other than 503 and
// transport failures). Clients are built and retired as the membership
// changes, and the metric series of a retired target are removed, so
// `target` labels stay bounded by the membership. Lookup candidates for a
// key are its owners in score order, then the other alive index members in
// score order. It is safe for concurrent use.
type Peers struct {
	mem     cluster.Membership
	self    string
	r       int
	token   func(context.Context) (string, error)
	metrics *runtime.Metrics

	mu      sync.Mutex
	opt     hedge.Options
	breaker client.BreakerOptions
	view    *cluster.View             // the View members was built for
	members map[string]*memberClients // by node id; replaced whole, never mutated
}

// memberClients are one member's clients.
type memberClients struct {
	id, url       string
	lookup, write *client.Client
}

// NewPeers returns the peer set of opt; it does no I/O. Clients are
// built on first use.
func NewPeers(opt PeerOptions) *Peers {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	return &Peers{mem: opt.Membership, self: opt.Self, r: max(opt.Replicas, 1), token: opt.Token, metrics: opt.Metrics,
		opt: opt.Lookup, breaker: opt.Breaker}
}

// Reconfigure replaces the lookup options and the lookup breaker. Every
// client is rebuilt on next use (breakers start closed).
func (cp *Peers) Reconfigure(lookup hedge.Options, breaker client.BreakerOptions) {
	cp.mu.Lock()
	old := cp.members
	cp.opt, cp.breaker, cp.view, cp.members = lookup, breaker, nil, nil
	cp.mu.Unlock()
	cp.retire(old, nil)
}

// Close retires every client. The set stays usable (clients are rebuilt).
func (cp *Peers) Close() { cp.Reconfigure(cp.options()) }

// options returns the lookup options and breaker in force.
func (cp *Peers) options() (hedge.Options, client.BreakerOptions) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.opt, cp.breaker
}

// Ownership returns the ownership of the current membership View.
func (cp *Peers) Ownership() View { return Of(cp.mem.View(), cp.r, cp.self) }

// current returns the clients of the current View, rebuilding them when the
// View changed since the last call.
func (cp *Peers) current() map[string]*memberClients {
	cp.mu.Lock()
	v := cp.mem.View() // read under the lock: an older View never replaces a newer set
	if v == cp.view && cp.members != nil {
		m := cp.members
		cp.mu.Unlock()
		return m
	}
	old := cp.members
	next := make(map[string]*memberClients)
	self := Of(v, 0, cp.self).Self()
	for _, m := range v.Alive(indexapi.RoleName) {
		u := m.URL(indexapi.RoleName)
		if m.ID == self || u == "" {
			continue
		}
		if mc := old[m.ID]; mc != nil && mc.url == u {
			next[m.ID] = mc
			continue
		}
		next[m.ID] = cp.newMember(m.ID, u)
	}
	cp.view, cp.members = v, next
	cp.mu.Unlock()
	cp.retire(old, next)
	return next
}

// newMember builds a member's clients. Callers hold mu.
func (cp *Peers) newMember(id, url string) *memberClients {
	lookup := client.Options{BaseURL: url, Token: cp.token, Timeout: cp.opt.Deadline, Retries: -1,
		Breaker: cp.breaker, Metrics: cp.metrics.Set(), Role: indexapi.RoleName}
	if lookup.Timeout <= 0 {
		lookup.Timeout = hedge.DefaultDeadline
	}
	// The write client has no breaker that opens: it carries writes to the
	// control-plane leader, whose health Raft decides (a breaker opened
	// against a leader that died would refuse it seconds after it came back
	// and was elected again), and replica batches to alive owners, which
	// gossip decides. Its metrics stay private: they would otherwise share
	// the ron_breaker_state series of the lookup client's target.
	write := client.Options{BaseURL: url, Token: cp.token, Timeout: ForwardTimeout, Retries: -1, Role: indexapi.RoleName,
		Breaker: client.BreakerOptions{Trip: func(client.Counts) bool { return false }}}
	return &memberClients{id: id, url: url, lookup: client.New(lookup), write: client.New(write)}
}

// retire closes the clients of old that next does not keep and removes the
// metric series of targets no kept client uses.
func (cp *Peers) retire(old, next map[string]*memberClients) {
	kept := map[string]bool{}
	for _, mc := range next {
		kept[mc.lookup.Target()] = true
	}
	for id, mc := range old {
		if next[id] == mc {
			continue
		}
		mc.lookup.Close()
		mc.write.Close()
		if t := mc.lookup.Target(); !kept[t] {
			forgetTarget(cp.metrics, t)
		}
	}
}

// forgetTarget unregisters the per-target series of a retired peer:
// ron_breaker_state, ron_breaker_open_total and
// ron_index_peer_requests_total.
func forgetTarget(m *runtime.Metrics, target string) {
	set := m.Set()
	for _, s := range []string{client.StateClosed, client.StateHalfOpen, client.StateOpen} {
		set.UnregisterMetric(fmt.Sprintf(`ron_breaker_state{role=%q,target=%q,state=%q}`, indexapi.RoleName, target, s))
	}
	set.UnregisterMetric(fmt.Sprintf(`ron_breaker_open_total{role=%q,target=%q}`, indexapi.RoleName, target))
	for _, res := range []string{"ok", "not_found", "error", "canceled", "skipped"} {
		set.UnregisterMetric(runtime.MetricName("index_peer_requests_total", "role", indexapi.RoleName, "target", target,
			"result", res))
	}
}

// Len returns how many peers have clients (alive index members but this
// node).
func (cp *Peers) Len() int { return len(cp.current()) }

// OpenCount returns how many peers' lookup breakers are open.
func (cp *Peers) OpenCount() int {
	n := 0
	for _, mc := range cp.current() {
		if mc.lookup.BreakerState() == client.StateOpen {
			n++
		}
	}
	return n
}

// lookupClients returns the lookup clients of key's candidates, in order.
func (cp *Peers) lookupClients(key []byte) []*client.Client {
	ms := cp.current()
	var out []*client.Client
	for _, m := range cp.Ownership().candidates(key) {
		if mc := ms[m.ID]; mc != nil {
			out = append(out, mc.lookup)
		}
	}
	return out
}

// Name asks the cluster candidates of the name for key (a name or
// "name@version"; see peerlookup.LookupName); a malformed key is 400. When
// no other index member is alive nobody else can know the name:
// hedge.ErrNotFound.
func (cp *Peers) Name(ctx context.Context, key string) (indexapi.NameRecord, error) {
	name, err := NameOf(key)
	if err != nil {
		return indexapi.NameRecord{}, err
	}
	peers := cp.lookupClients(NameKey(name))
	if len(peers) == 0 {
		return indexapi.NameRecord{}, hedge.ErrNotFound
	}
	opt, _ := cp.options()
	return peerlookup.LookupName(ctx, key, peers, opt)
}

// Providers asks the cluster candidates of id for its live providers (see
// peerlookup.LookupProviders, and Name for the case of no candidates).
func (cp *Peers) Providers(ctx context.Context, id store.ID) (indexapi.ProviderList, error) {
	peers := cp.lookupClients(ObjectKey(id))
	if len(peers) == 0 {
		return indexapi.ProviderList{}, hedge.ErrNotFound
	}
	opt, _ := cp.options()
	return peerlookup.LookupProviders(ctx, id, peers, opt)
}

// History asks the candidates of name for its kept versions with
// GET /names/{name}/versions?local=1 legs; the first answer listing a
// version wins. No candidates is hedge.ErrNotFound.
func (cp *Peers) History(ctx context.Context, name string) (indexapi.NameHistory, error) {
	peers := cp.lookupClients(NameKey(name))
	if len(peers) == 0 {
		return indexapi.NameHistory{}, hedge.ErrNotFound
	}
	check := func(h indexapi.NameHistory) error {
		if h.Name != name {
			return fmt.Errorf("answer for name %q, asked %q", h.Name, name)
		}
		return nil
	}
	legs := make([]hedge.Peer[indexapi.NameHistory], len(peers))
	for i, c := range peers {
		legs[i] = &hedge.HTTPPeer[indexapi.NameHistory]{Client: c, Path: "/names/" + name + "/versions",
			Op: "GET /names/{name}/versions", Check: check}
	}
	opt, _ := cp.options()
	h, _, err := hedge.Lookup(ctx, legs, func(h indexapi.NameHistory) bool { return len(h.Versions) > 0 }, opt)
	return h, err
}

// WriteClient returns the write client of member id (forwarded name
// writes, never retried), 503 upstream_unavailable when id is not an
// alive index member with a URL.
func (cp *Peers) WriteClient(id string) (*client.Client, error) {
	if mc := cp.current()[id]; mc != nil {
		return mc.write, nil
	}
	return nil, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
		"index member %s is not reachable", id)
}

// Post sends a JSON body to member id (a /replica/* call under
// replicaTimeout, never retried) and drains the answer. Any non-2xx answer
// is an error.
func (cp *Peers) Post(ctx context.Context, id, path string, body []byte) error {
	c, err := cp.WriteClient(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, replicaTimeout)
	defer cancel()
	resp, err := c.Do(ctx, &client.Request{Method: http.MethodPost, Path: path, Body: bytes.NewReader(body),
		Header: http.Header{"Content-Type": {"application/json"}}, Retry: client.RetryNever, Op: "POST " + path})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, hedge.MaxAnswer))
	return resp.Body.Close()
}
