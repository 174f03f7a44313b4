package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
)

// KeySize is the gossip key length: memberlist SecretKey, AES-256-GCM.
const KeySize = 32

// Options configure a Cluster.
type Options struct {
	// Config is the [cluster] section; it must validate.
	Config Config
	// NodeID is this node's id (cluster.node_id or the generated one): the
	// memberlist node name.
	NodeID string
	// Key is the 32-byte gossip key, BLAKE3.DeriveKey("ron cluster gossip
	// v1", root key): nodes with another key cannot gossip with this one.
	Key []byte
	// Meta is this node's metadata; an empty ID means NodeID, a zero V
	// means MetaVersion. Its encoding must fit MaxMetaSize.
	Meta Meta
	// Log receives membership and memberlist logs.
	Log zerolog.Logger
	// Metrics receives the membership metrics (nil: a private set).
	Metrics *runtime.Metrics
	// AllowList, when not nil, turns the member allow list on
	// (cluster.registry_admission): it returns the ids listed as node items
	// in the registry's committed HEAD, or ok = false when that is unknown
	// (the last answer then stays; before any, only this node is a member).
	// It is called by the table owner on every change and tick, so it must
	// be cheap and must not block; the map must not be modified afterwards.
	AllowList func() (ids map[string]bool, ok bool)

	// tune adjusts the memberlist config after ron's settings (tests:
	// ephemeral ports, shorter intervals).
	tune func(*memberlist.Config)
	// joinBackoff replaces the join retry policy when not nil (tests).
	joinBackoff *runtime.Backoff
}

// localMeta is the validated local metadata and its encodings.
type localMeta struct {
	meta    Meta
	raw     []byte
	leaving []byte // raw with the leaving announcement; nil when too large
}

// lifecycle states of a Cluster.
const (
	stateNew = iota
	stateStarting
	stateStarted
	stateStopped
)

// Cluster is the gossip membership of this node (docs/cluster.md §2): a
// memberlist instance, its delegates, and the table owner publishing
// immutable Views. It implements Membership. New builds it, Start binds
// gossip and makes the first join attempt, Run owns the table, the join
// retries and the reconnects to dead members until its ctx ends, Stop
// leaves and shuts down.
type Cluster struct {
	opt     Options
	id      string
	log     zerolog.Logger
	metrics memberMetrics
	born    time.Time       // when this node's membership began (self's since)
	backoff runtime.Backoff // join retries

	local    atomic.Pointer[localMeta]
	view     atomic.Pointer[View]
	subs     subscribers
	inbox    *inbox
	nudge    chan struct{}              // capacity 1: the local metadata changed
	table    *table                     // owned by the goroutine running own
	rejoin   atomic.Pointer[rejoinPlan] // published by the owner, read by reconnectLoop
	conflict atomic.Bool                // this node's name is contested
	leaving  atomic.Bool                // Stop is announcing the departure
	joined   atomic.Bool                // some join succeeded (or others joined us)

	stopCtx    context.Context // cancelled by Stop: ends Run
	stopCancel context.CancelFunc
	stopOnce   sync.Once

	mu      sync.Mutex // guards the fields below; never held across I/O
	state   int
	ml      *memberlist.Memberlist
	running bool
	runDone chan struct{} // closed when Run returns
	// selfAddr is this node's advertised gossip address (host:port);
	// rejoinEvery is the reconnect interval and rejoinTimeout memberlist's
	// TCP timeout, both from the memberlist config. Start sets them.
	selfAddr                   string
	rejoinEvery, rejoinTimeout time.Duration
}

var _ Membership = (*Cluster)(nil)

// New validates opt and builds a Cluster; it binds nothing. The View holds
// this node alone until Run processes gossip.
func New(opt Options) (*Cluster, error) {
	if err := opt.Config.Validate(); err != nil {
		return nil, err
	}
	if !ValidNodeID(opt.NodeID) {
		return nil, fmt.Errorf("cluster: node id %q must match [A-Za-z0-9._-]{1,64}", opt.NodeID)
	}
	if len(opt.Key) != KeySize {
		return nil, fmt.Errorf("cluster: gossip key is %d bytes, want %d", len(opt.Key), KeySize)
	}
	opt.Key = append([]byte(nil), opt.Key...)
	c := &Cluster{
		opt:     opt,
		id:      opt.NodeID,
		log:     opt.Log.With().Str("component", "cluster").Logger(),
		metrics: newMemberMetrics(opt.Metrics),
		born:    time.Now(),
		inbox:   newInbox(inboxCapacity),
		nudge:   make(chan struct{}, 1),
		backoff: joinBackoff,
	}
	if opt.joinBackoff != nil {
		c.backoff = *opt.joinBackoff
	}
	lm, err := c.encodeLocal(opt.Meta)
	if err != nil {
		return nil, err
	}
	c.local.Store(lm)
	c.table = newTable(c.id, opt.Config.ForgetAfter, opt.AllowList != nil, c.log, c.metrics.event)
	c.rejoin.Store(&rejoinPlan{})
	c.stopCtx, c.stopCancel = context.WithCancel(context.Background())
	v := NewView(c.id, []Member{c.selfMember()}, time.Time{})
	c.view.Store(v)
	c.metrics.members(v)
	return c, nil
}

// encodeLocal validates m as this node's metadata.
func (c *Cluster) encodeLocal(m Meta) (*localMeta, error) {
	if m.ID == "" {
		m.ID = c.id
	}
	if m.V == 0 {
		m.V = MetaVersion
	}
	if m.ID != c.id {
		return nil, fmt.Errorf("cluster metadata: id %q differs from the node id %q", m.ID, c.id)
	}
	raw, err := EncodeMeta(m)
	if err != nil {
		return nil, err
	}
	lm := &localMeta{meta: m.clone(), raw: raw}
	if leaving, err := encodeWire(wireMeta{Meta: m, Leaving: true}); err == nil && len(leaving) <= MaxMetaSize {
		lm.leaving = leaving
	}
	return lm, nil
}

// selfMember is this node's View entry, built from the local metadata.
func (c *Cluster) selfMember() Member {
	return c.local.Load().meta.member(StateAlive, c.born)
}

// View implements Membership: the current snapshot, never nil.
func (c *Cluster) View() *View { return c.view.Load() }

// Subscribe implements Membership.
func (c *Cluster) Subscribe() (<-chan struct{}, func()) { return c.subs.add() }

// updateTimeout bounds UpdateMeta's wait for the update broadcast.
const updateTimeout = time.Second

// UpdateMeta replaces this node's metadata (a reload that changed URLs or
// zone) and gossips it (memberlist UpdateNode, waiting at most 1 s for the
// broadcast; it spreads anyway). It fails, changing nothing, when m does not
// validate or names another node id.
func (c *Cluster) UpdateMeta(m Meta) error {
	lm, err := c.encodeLocal(m)
	if err != nil {
		return err
	}
	c.local.Store(lm)
	select {
	case c.nudge <- struct{}{}:
	default:
	}
	c.mu.Lock()
	ml := c.ml
	if c.state != stateStarted {
		ml = nil
	}
	c.mu.Unlock()
	if ml == nil {
		return nil
	}
	if err := ml.UpdateNode(updateTimeout); err != nil {
		c.log.Warn().Err(err).Msg("metadata update not yet broadcast; gossip will spread it")
	}
	return nil
}

// Readiness items of Ready.
const (
	NotReadyGossip       = "cluster:gossip"
	NotReadyNameConflict = "cluster:name_conflict"
)

// Ready returns what keeps membership from being ready (empty when ready):
// NotReadyGossip while gossip is not bound (before Start, after Stop) and
// NotReadyNameConflict once another node claimed this node's id (it stays
// until restart with a unique id). Joining is not a condition.
func (c *Cluster) Ready() []string {
	var missing []string
	c.mu.Lock()
	if c.state != stateStarted {
		missing = append(missing, NotReadyGossip)
	}
	c.mu.Unlock()
	if c.conflict.Load() {
		missing = append(missing, NotReadyNameConflict)
	}
	return missing
}

// nameConflict records a memberlist name conflict (any node may observe
// one); only a conflict about this node's own id makes it not ready.
func (c *Cluster) nameConflict(name, existing, other string) {
	c.metrics.event("conflict")
	ev := c.log.Warn()
	if name == c.id {
		c.conflict.Store(true)
		ev = c.log.Error()
	}
	ev.Str("node", name).Str("existing", existing).Str("other", other).
		Msg("node name conflict: two nodes claim one id (cluster.node_id must be unique)")
}

// errStopped is Start's error after Stop.
var errStopped = errors.New("cluster: stopped")
