package repairlink

import (
	"context"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// Chunks is a local object read chunk by chunk, each chunk verified
// against its digest before Next returns it (a corrupt chunk quarantines
// the object). Next's chunk may be a view of a pooled buffer that Close
// gives back, so a push wraps its reader in a peer.ReplicaBody; Close and
// Next exclude each other, Next fails once closed, Close is idempotent.
type Chunks interface {
	repair.ChunkSource
	Close()
}

// Options are what a Link needs from the storage role.
type Options struct {
	// Members is the cluster membership; its view's Self is this node.
	Members cluster.Membership
	// Engine is the node's blob store: listed, pulled into, dropped from
	// and quarantined.
	Engine store.BlobStore
	// OpenChunks opens the local copy of id for a chunk-by-chunk verified
	// read (pushes, rechecks); its errors are the engine's.
	OpenChunks func(ctx context.Context, id store.ID) (Chunks, store.Info, error)
	// Peers is the node-to-node client (replica PUTs, inventory checks).
	Peers *peer.Client
	// Announce queues the provider record of a pulled object (with the
	// provider_ttl in force).
	Announce func(info store.Info)
	// Withdraw queues the withdrawal of id's provider record (a dropped
	// copy).
	Withdraw func(id store.ID)
	// Quarantined reports a local copy a recheck found whole-digest wrong
	// and quarantined: the role withdraws it and queues its urgent pull.
	Quarantined func(id store.ID)
	// Token yields the node token sent on pulls and provider lookups; nil
	// sends none.
	Token func(context.Context) (string, error)
	// Stall returns replica_stall_timeout in force: New bounds dials by
	// it, and every phase of a pull by its value at the time.
	Stall func() time.Duration
	// MaxObjectBytes returns storage.max_object_bytes in force.
	MaxObjectBytes func() int64
}

// Link is the repair engine's view of one storage node: repair.Local,
// repair.Remote and repair.Executor. Build it with New; it is safe for
// concurrent use.
type Link struct {
	opt  Options
	http *http.Client // repair pulls and provider lookups
}

var (
	_ repair.Local    = (*Link)(nil)
	_ repair.Remote   = (*Link)(nil)
	_ repair.Executor = (*Link)(nil)
)

// New returns a Link. It does no I/O.
func New(opt Options) *Link {
	return &Link{opt: opt, http: newRepairHTTP(opt.Stall())}
}

// newRepairHTTP is the client of repair pulls and provider lookups: a
// keep-alive pool, no redirects, no compression, dials bounded by stall.
func newRepairHTTP(stall time.Duration) *http.Client {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, DialTimeout: stall,
		MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second, DisableCompression: true})
	return &http.Client{Transport: tr, CheckRedirect: client.NoRedirects}
}

// Close drops the idle connections of pulls and provider lookups. Call it
// once the repair tasks stopped; the Link stays usable.
func (l *Link) Close() { l.http.CloseIdleConnections() }
