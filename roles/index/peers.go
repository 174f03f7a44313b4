package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/zeebo/blake3"

	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/roles/index/peerlookup"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// HedgedPeers is the static-mode PeerSource (docs/index.md §6, §12
// index.peers): one client.Client (with its own breaker) per peer base URL,
// and every lookup a hedge.Lookup over hedge.HTTPPeers asking
// GET /names/{key}?local=1 or GET /providers/{b3}?local=1. Candidates are
// ordered by rendezvous score of (key, peer URL). It is safe for concurrent
// use.
type HedgedPeers struct {
	opt   hedge.Options
	peers []peerClient
}

// peerClient is one configured peer.
type peerClient struct {
	url string // normalised base URL: the rendezvous peer id
	c   *client.Client
}

var _ PeerSource = (*HedgedPeers)(nil)

// NewHedgedPeers builds the peer source for urls (each http(s)://host[:port]
// with an optional path, no query or fragment; duplicates are an error).
// copt is the template of every peer's client: its BaseURL is replaced by the
// peer's URL. opt tunes the hedged lookups (alpha, beta, hedge_ms,
// deadline_ms, retries).
func NewHedgedPeers(urls []string, opt hedge.Options, copt client.Options) (*HedgedPeers, error) {
	hp := &HedgedPeers{opt: opt}
	seen := make(map[string]bool, len(urls))
	for _, raw := range urls {
		u, err := checkPeerURL(raw)
		if err != nil {
			return nil, err
		}
		if seen[u] {
			return nil, fmt.Errorf("index: peers: %q listed twice", raw)
		}
		seen[u] = true
		o := copt
		o.BaseURL = u
		hp.peers = append(hp.peers, peerClient{url: u, c: client.New(o)})
	}
	return hp, nil
}

// checkPeerURL validates one peer base URL and returns its normalised form
// (see normalizeURL).
func checkPeerURL(raw string) (string, error) {
	u, err := normalizeURL(raw)
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	return u, nil
}

// normalizeURL validates a base URL (http or https, a host, no user info,
// query or fragment) and returns it normalised so that two spellings of one
// listener compare equal: scheme (url.Parse does it) and host lower-cased, the scheme's default
// port dropped, no trailing slash.
func normalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", fmt.Errorf("peer URL %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("peer URL %q: scheme must be http or https", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("peer URL %q: missing host", raw)
	case u.User != nil:
		return "", fmt.Errorf("peer URL %q: user info not allowed", raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("peer URL %q: query and fragment not allowed", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	u.Host = host
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	if port != "" {
		u.Host += ":" + port
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// Len returns the number of configured peers.
func (hp *HedgedPeers) Len() int { return len(hp.peers) }

// OpenCount returns how many peers' breakers are open (peers_open in the
// role's status details).
func (hp *HedgedPeers) OpenCount() int {
	n := 0
	for _, p := range hp.peers {
		if p.c.BreakerState() == client.StateOpen {
			n++
		}
	}
	return n
}

// peerSetup is everything a peer source is built from; the role rebuilds
// its source when this changes on reload.
type peerSetup struct {
	urls  []string // configured peers minus this node
	hedge hedge.Options
	bo    client.BreakerOptions
	key   string // the inputs, for equal
}

// newPeerSetup derives the peer source settings of cfg for a node whose own
// advertise URL is self: the peers minus self (by normalised URL), the docs/index.md §6
// lookup options and the docs/index.md §6 per-peer breaker. skipped lists the peers
// recognised as this node.
func newPeerSetup(cfg Config, self string, m *runtime.Metrics) (ps peerSetup, skipped []string) {
	me, _ := normalizeURL(self)
	for _, raw := range cfg.Peers {
		if u, err := normalizeURL(raw); err == nil && u == me {
			skipped = append(skipped, raw)
			continue
		}
		ps.urls = append(ps.urls, raw)
	}
	lo, hi := cfg.jitter()
	ps.hedge = hedge.Options{Alpha: cfg.Alpha, Beta: orNone(cfg.Beta), HedgeAfter: orNone(cfg.hedgeAfter()),
		Deadline: cfg.deadline(), Retries: orNone(cfg.RetryMax), RetryPauseMin: lo, RetryPauseMax: hi,
		Metrics: m, Role: roleName}
	ps.bo = cfg.WindowBreakerConfig.Options()
	ps.key = fmt.Sprintf("%q %d %d %d %d %d %v %v %v %d %v %v %d", ps.urls, cfg.Alpha, cfg.Beta, cfg.HedgeMS,
		cfg.DeadlineMS, cfg.RetryMax, cfg.RetryJitterMS, cfg.BreakerWindow, cfg.BreakerBucket,
		cfg.BreakerMinRequests, cfg.BreakerTripRatio, cfg.BreakerCooldown, cfg.BreakerHalfOpen)
	return ps, skipped
}

// orNone maps 0 to -1: hedge.Options reads 0 as "default", -1 as "none".
func orNone[N int | time.Duration](v N) N {
	if v == 0 {
		return -1
	}
	return v
}

// build returns the peer source of ps (nil when no peer remains), with
// per-peer clients reporting into m and breaker moves to onState.
func (ps peerSetup) build(m *runtime.Metrics, onState func(target, from, to string)) (*HedgedPeers, error) {
	if len(ps.urls) == 0 {
		return nil, nil
	}
	bo := ps.bo
	bo.OnStateChange = onState
	copt := client.Options{Timeout: ps.hedge.Deadline, Retries: -1, Breaker: bo, Metrics: m.Set(), Role: roleName}
	return NewHedgedPeers(ps.urls, ps.hedge, copt)
}

// equal reports whether two setups build the same source.
func (ps peerSetup) equal(o peerSetup) bool { return ps.key == o.key }

// Close releases every peer client's idle connections.
func (hp *HedgedPeers) Close() {
	for _, p := range hp.peers {
		p.c.Close()
	}
}

// order returns the peers sorted by rendezvous score of (key, peer url),
// highest first (docs/index.md §6 candidates).
func (hp *HedgedPeers) order(key []byte) []peerClient {
	type scored struct {
		p peerClient
		s uint64
	}
	ss := make([]scored, len(hp.peers))
	for i, p := range hp.peers {
		h := blake3.New()
		_, _ = h.Write(key)
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(p.url))
		var sum [8]byte
		_, _ = h.Digest().Read(sum[:])
		ss[i] = scored{p, binary.BigEndian.Uint64(sum[:])}
	}
	slices.SortStableFunc(ss, func(a, b scored) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return strings.Compare(a.p.url, b.p.url)
	})
	out := make([]peerClient, len(ss))
	for i, s := range ss {
		out[i] = s.p
	}
	return out
}

// Name asks the peers for key (a name or "name@version"), in rendezvous
// order of (name, peer URL); see peerlookup.LookupName.
func (hp *HedgedPeers) Name(ctx context.Context, key string) (indexapi.NameRecord, error) {
	name, _, _ := strings.Cut(key, "@")
	return peerlookup.LookupName(ctx, key, clientsOf(hp.order(ownership.NameKey(name))), hp.opt)
}

// Providers asks the peers for the live providers of id, in rendezvous
// order of (digest, peer URL); see peerlookup.LookupProviders.
func (hp *HedgedPeers) Providers(ctx context.Context, id store.ID) (indexapi.ProviderList, error) {
	return peerlookup.LookupProviders(ctx, id, clientsOf(hp.order(id[:])), hp.opt)
}

// clientsOf returns the peers' clients in order.
func clientsOf(ps []peerClient) []*client.Client {
	out := make([]*client.Client, len(ps))
	for i, p := range ps {
		out[i] = p.c
	}
	return out
}

// breakerMove is one peer breaker transition, logged by the role.
type breakerMove struct{ target, from, to string }

// breakerMoved is the peer clients' OnStateChange: it runs under the
// breaker's lock, so it only offers the move to the bounded log queue
// (drop-oldest; never blocks).
func (r *Role) breakerMoved(target, from, to string) {
	if r.moves != nil {
		_, _, _ = r.moves.Offer(breakerMove{target, from, to})
	}
}

// logMoves logs each peer breaker transition once (worker "breaker-log").
func (r *Role) logMoves(ctx context.Context) error {
	for {
		m, err := r.moves.Pop(ctx)
		if err != nil {
			return nil // ctx ended or the queue was closed at Stop
		}
		ev := r.Log.Info()
		if m.to == client.StateOpen {
			ev = r.Log.Warn()
		}
		ev.Str("target", m.target).Str("from", m.from).Str("to", m.to).Msg("peer breaker changed state")
	}
}
