// Package indexsink is the announcing.Sink the composition root plugs into the
// storage role (docs/storage.md §5): it turns storage.Records into index
// provider records (docs/index.md §4) and delivers them to the index role of
// this process when there is one, else to storage.index_urls over HTTP, else
// (cluster mode) to an alive index member, one URL at a time with failover.
package indexsink

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/topology"
)

// ErrNoTarget is returned by New, CheckRetarget and Retarget when there is
// neither a local index nor an index URL nor a cluster to announce to.
var ErrNoTarget = errors.New("indexsink: no local index and no index_urls")

// ErrNoIndexMember is returned by Announce in cluster mode when no alive
// index member has a usable URL; the announcer retries it.
var ErrNoIndexMember = errors.New("indexsink: no alive index member")

// Announcer is the part of indexapi.Client a Sink uses; the index role's
// LocalClient (roles/index) and indexapi.HTTPClient are Announcers.
type Announcer interface {
	Announce(ctx context.Context, recs []indexapi.Announcement) (accepted, withdrawn int, err error)
}

// Options configure a Sink.
type Options struct {
	// Local is the in-process index; nil when the index role is not in
	// this process. When set, URLs are not used.
	Local Announcer
	// URLs are storage.index_urls, used when Local is nil.
	URLs []string
	// Cluster is the membership in cluster mode (nil = off). With neither
	// Local nor URLs, records go to the alive index members (their "index"
	// URL), re-picked whenever the view changes and failed over like URLs.
	// The Sink also reports index membership changes (IndexChanges) so the
	// storage role re-provides when ownership moves.
	Cluster cluster.Membership
	// Token supplies the bearer token for HTTP targets (index_token, else
	// MintToken); nil sends none. Retarget's token, when set, overrides it.
	Token func(ctx context.Context) (string, error)
	// Node is this node's id (runtime/nodeid).
	Node string
	// Addr returns this storage's advertised base URL. It is evaluated once
	// per batch: the listener may be bound to :0 until Start.
	Addr func() string
	// Region returns cluster.zone ("" = none); it is evaluated once per
	// batch so a reloaded zone applies to the next one. nil = none.
	Region func() string
	// Metrics receives the HTTP client metrics (breaker state, retries,
	// timeouts) under role="storage"; nil keeps them private.
	Metrics *runtime.Metrics
}

// Field syntax of docs/index.md §4.
var (
	nodeRE   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	regionRE = regexp.MustCompile(`^[A-Za-z0-9._-]{0,64}$`)
)

// Sink delivers provider records to an index. It implements
// announcing.Retargeter and is safe for concurrent use.
type Sink struct {
	opt    Options
	static atomic.Pointer[string] // index_token from Retarget; "" = opt.Token

	mu      sync.Mutex                    // serialises Retarget, member re-picks and Close
	targets atomic.Pointer[[]*target]     // HTTP targets in configured order
	members atomic.Pointer[memberTargets] // cluster mode: targets of one membership view
	last    atomic.Pointer[target]        // the target that last succeeded
}

var _ announcing.Retargeter = (*Sink)(nil)

// New validates opt and returns a Sink. It does no I/O. Errors: a bad URL,
// node or region, a nil Addr, or ErrNoTarget when none of Local, URLs and
// Cluster is set (the caller then leaves announcing off).
func New(opt Options) (*Sink, error) {
	switch {
	case !nodeRE.MatchString(opt.Node):
		return nil, fmt.Errorf("indexsink: node id %q: want 1–64 of A-Z a-z 0-9 . _ -", opt.Node)
	case opt.Region != nil && !regionRE.MatchString(opt.Region()):
		return nil, fmt.Errorf("indexsink: region %q: want 0–64 of A-Z a-z 0-9 . _ -", opt.Region())
	case opt.Addr == nil:
		return nil, errors.New("indexsink: Addr is required")
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	s := &Sink{opt: opt}
	empty := ""
	s.static.Store(&empty)
	s.targets.Store(&[]*target{})
	if err := s.Retarget(opt.URLs, ""); err != nil {
		return nil, err
	}
	return s, nil
}

// Announce delivers one batch (at most 1000 records) all or nothing within
// ctx's deadline. Errors are *httpx.Error values: 4xx other than 429 means
// the batch or token was refused and retrying will not help. A batch that
// ran out of time counts ron_io_timeouts_total{role="storage",op="index_rpc"}.
func (s *Sink) Announce(ctx context.Context, batch []announcing.Record) error {
	if len(batch) == 0 {
		return nil
	}
	recs := s.convert(batch)
	var err error
	if s.opt.Local != nil {
		_, _, err = s.opt.Local.Announce(ctx, recs)
	} else {
		err = s.announceHTTP(ctx, recs)
	}
	if err != nil && (client.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded)) {
		s.opt.Metrics.Counter("io_timeouts_total", "role", storageapi.RoleName, "op", "index_rpc").Inc()
	}
	return err
}

// convert builds the index records of batch. TTLs are rounded up to whole
// seconds (a positive TTL never becomes a withdraw) and capped at
// announcing.MaxProviderTTL.
func (s *Sink) convert(batch []announcing.Record) []indexapi.Announcement {
	addr, region := s.opt.Addr(), s.region()
	out := make([]indexapi.Announcement, len(batch))
	for i, r := range batch {
		out[i] = indexapi.Announcement{ID: r.ID, Node: s.opt.Node, Addr: addr, Region: region,
			Type: r.Type, TTL: wholeSeconds(r.TTL)}
	}
	return out
}

// region is the batch's region: Options.Region's value, or "" when there
// is none or it lost its syntax (the index would refuse the whole batch).
func (s *Sink) region() string {
	if s.opt.Region == nil {
		return ""
	}
	if r := s.opt.Region(); regionRE.MatchString(r) {
		return r
	}
	return ""
}

func wholeSeconds(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 0
	}
	if rem := ttl % time.Second; rem != 0 {
		ttl += time.Second - rem
	}
	return min(ttl, announcing.MaxProviderTTL)
}

// Target implements announcing.Retargeter: "local index", "index_urls (N)"
// or, in cluster mode without either, "cluster index members (N alive)".
func (s *Sink) Target() string {
	switch list, place := s.httpPlace(); place {
	case topology.InProcess:
		return "local index"
	case topology.Members:
		return fmt.Sprintf("cluster index members (%d alive)", len(s.memberTargets()))
	default:
		return fmt.Sprintf("index_urls (%d)", len(list))
	}
}

// Close releases the idle connections of every HTTP target. The Sink stays
// usable.
func (s *Sink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range *s.targets.Load() {
		t.c.Close()
	}
	if m := s.members.Load(); m != nil {
		for _, t := range m.list {
			t.c.Close()
		}
	}
}

// token is the bearer token of HTTP targets: Retarget's static token, else
// opt.Token's, else none.
func (s *Sink) token(ctx context.Context) (string, error) {
	if tok := *s.static.Load(); tok != "" {
		return tok, nil
	}
	if s.opt.Token == nil {
		return "", nil
	}
	return s.opt.Token(ctx)
}
