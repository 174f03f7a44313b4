package clusterindex

import (
	"context"
	"strings"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/runtime/topology"
	"github.com/ronhq/ron/store"
)

// indexRole is the role Members reads from.
const indexRole = indexapi.RoleName

// MembersOptions configure NewMembers.
type MembersOptions struct {
	// Membership is the table followed (required).
	Membership cluster.Membership
	// Zone is the reader's zone: index members in it are asked first.
	Zone string
	// Token is the bearer of member calls: the node's minted link token, as
	// for a configured index_url (members are trusted links).
	Token func(context.Context) (string, error)
	// Client are the per-member HTTP client settings (HTTP, Timeout,
	// Metrics, Role); BaseURL and Token are set per member, and Retries to
	// none: the next member is the retry (a member's 503 with Retry-After
	// would otherwise hold the call for seconds).
	Client client.Options
	// Log receives members left out of the pool.
	Log zerolog.Logger
}

// Members is an indexapi.Client over the alive index members of a cluster
// (docs/cluster.md §6–§7): one indexapi.HTTPClient per member, built and
// retired by Run as membership changes. A call goes to the members in
// Pool.Ranked order (the reader's zone first, then by rendezvous score of
// the call's key: the object id, the name key, so the first member asked is
// usually an owner) and falls back to the next member on failure: reads
// and Announce (idempotent) on a 5xx, 408, 429 or no answer; name writes
// only when the member could not be reached (a write that may have been
// applied is never sent twice). 4xx answers (404 included) are final.
// Providers and Resolve answers pass through Wrap. With no alive index
// member a call fails with 503 upstream_unavailable (details.reason
// "no_member").
type Members struct {
	indexapi.Client
	pool *topology.Pool[*indexapi.HTTPClient]
}

var _ indexapi.Client = (*Members)(nil)

// NewMembers builds the clients of the current index members; it does no
// I/O. Run keeps them current. opt.Client.Metrics is not used: the
// clients' per-member series stay private.
func NewMembers(opt MembersOptions) *Members {
	opt.Client.Retries = -1
	// Per-member series (breaker state, per-target timeouts) would outlive
	// the members that leave: member clients keep them private, as the
	// gateway's member links do.
	opt.Client.Metrics = nil
	pool := topology.NewPool(topology.PoolOptions[*indexapi.HTTPClient]{Membership: opt.Membership, Role: indexRole, Zone: opt.Zone,
		Log: opt.Log, Retire: (*indexapi.HTTPClient).Close,
		Build: func(_, url string) (*indexapi.HTTPClient, error) {
			return indexapi.NewHTTPClient(url, opt.Token, opt.Client), nil
		}})
	return &Members{Client: Wrap(&failover{pool: pool}, opt.Membership), pool: pool}
}

// Run follows membership changes until ctx ends (Pool.Run); call it once.
func (m *Members) Run(ctx context.Context) error { return m.pool.Run(ctx) }

// Len returns the number of alive index members known.
func (m *Members) Len() int { return m.pool.Len() }

// failover is the indexapi.Client trying the pool's members in order.
type failover struct {
	pool *topology.Pool[*indexapi.HTTPClient]
}

// Announce implements indexapi.Client (idempotent: re-sent to the next member).
func (f *failover) Announce(ctx context.Context, recs []indexapi.Announcement) (int, int, error) {
	type counts struct{ accepted, withdrawn int }
	c, err := topology.Try(ctx, f.pool, nil, topology.ReadAgain, func(c *indexapi.HTTPClient) (counts, error) {
		a, w, err := c.Announce(ctx, recs)
		return counts{a, w}, err
	})
	return c.accepted, c.withdrawn, err
}

// Providers implements indexapi.Client.
func (f *failover) Providers(ctx context.Context, id store.ID, region string, limit int) (indexapi.ProviderList, error) {
	return topology.Try(ctx, f.pool, id[:], topology.ReadAgain, func(c *indexapi.HTTPClient) (indexapi.ProviderList, error) {
		return c.Providers(ctx, id, region, limit)
	})
}

// GetName implements indexapi.Client.
func (f *failover) GetName(ctx context.Context, name string) (indexapi.NameRecord, error) {
	return topology.Try(ctx, f.pool, rendezvous.NameKey(name), topology.ReadAgain, func(c *indexapi.HTTPClient) (indexapi.NameRecord, error) {
		return c.GetName(ctx, name)
	})
}

// GetNameVersion implements indexapi.Client.
func (f *failover) GetNameVersion(ctx context.Context, name string, version uint64) (indexapi.NameRecord, error) {
	return topology.Try(ctx, f.pool, rendezvous.NameKey(name), topology.ReadAgain, func(c *indexapi.HTTPClient) (indexapi.NameRecord, error) {
		return c.GetNameVersion(ctx, name, version)
	})
}

// SetName implements indexapi.Client (another member only when unreachable).
func (f *failover) SetName(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexapi.NameRecord, error) {
	return topology.Try(ctx, f.pool, rendezvous.NameKey(name), topology.WriteAgain, func(c *indexapi.HTTPClient) (indexapi.NameRecord, error) {
		return c.SetName(ctx, name, target, cond)
	})
}

// DeleteName implements indexapi.Client (another member only when unreachable).
func (f *failover) DeleteName(ctx context.Context, name string, cond indexapi.Cond) (indexapi.NameDeletion, error) {
	return topology.Try(ctx, f.pool, rendezvous.NameKey(name), topology.WriteAgain, func(c *indexapi.HTTPClient) (indexapi.NameDeletion, error) {
		return c.DeleteName(ctx, name, cond)
	})
}

// History implements indexapi.Client.
func (f *failover) History(ctx context.Context, name string) (indexapi.NameHistory, error) {
	return topology.Try(ctx, f.pool, rendezvous.NameKey(name), topology.ReadAgain, func(c *indexapi.HTTPClient) (indexapi.NameHistory, error) {
		return c.History(ctx, name)
	})
}

// Resolve implements indexapi.Client.
func (f *failover) Resolve(ctx context.Context, key string, noCache bool) (indexapi.ResolveAnswer, error) {
	return topology.Try(ctx, f.pool, ResolveKey(key), topology.ReadAgain, func(c *indexapi.HTTPClient) (indexapi.ResolveAnswer, error) {
		return c.Resolve(ctx, key, noCache)
	})
}

// ResolveKey is the rendezvous key of a resolve key: the digest of a b3
// id, else the name key of the name (name@version: of name).
func ResolveKey(key string) []byte {
	if strings.HasPrefix(key, "b3:") {
		if id, err := store.ParseID(key); err == nil {
			return id[:]
		}
	}
	name, _, _ := strings.Cut(key, "@")
	return rendezvous.NameKey(name)
}
