// Package peer is the storage role's node-to-node HTTP client
// (docs/cluster.md §4, §5): synchronous replica copies (PUT /o/{b3} with
// X-Ron-Replica: 1 and Expect: 100-continue) and inventory checks
// (POST /inventory/has) against other storage members.
//
// One Client serves every target: it keeps a keep-alive pool per host, sends
// the node token, bounds every response read, and aborts an exchange that
// makes no progress for Options.Stall.
package peer

import (
	"context"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
)

// Defaults and bounds of the client.
const (
	// DefaultStall is replica_stall_timeout's default (docs/cluster.md §10).
	DefaultStall = 5 * time.Second
	// ExpectContinueTimeout is how long a replica PUT waits for 100 Continue
	// (or a final answer such as 200 "already held") before sending the body.
	ExpectContinueTimeout = time.Second
	// maxReplyBytes bounds the body of a PUT answer or an error envelope.
	maxReplyBytes = 64 << 10
	// maxHasReplyBytes bounds a /inventory/has answer: 1000 ids of 67 bytes
	// in JSON with their quotes and commas, plus the envelope.
	maxHasReplyBytes = 128 << 10
	// maxIdlePerHost is the keep-alive pool size per target.
	maxIdlePerHost = 16
)

// Header names and values of node-to-node writes.
const (
	HeaderReplica = "X-Ron-Replica"
	replicaValue  = "1"
)

// Options configure a Client.
type Options struct {
	// Token yields the node token sent as "Authorization: Bearer"; nil sends
	// none. Its error fails the call (Reason "connection").
	Token func(context.Context) (string, error)
	// Stall aborts an exchange that makes no progress for this long:
	// connecting, sending the body (no body byte taken for Stall) or waiting
	// for the answer. 0 means DefaultStall.
	Stall time.Duration
	// Metrics receives ron_io_timeouts_total{role="storage",op="replica_stall"};
	// nil keeps the count private.
	Metrics *runtime.Metrics
}

// Client calls other storage members. It is safe for concurrent use; build
// one per node with New and Close it when the role stops.
type Client struct {
	opt Options
	tr  *http.Transport
	hc  *http.Client
}

// New returns a Client. It does no I/O.
func New(opt Options) *Client {
	if opt.Stall <= 0 {
		opt.Stall = DefaultStall
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	tr := client.NewTransport(client.TransportOptions{
		Base:                  client.BaseBare,
		DialTimeout:           opt.Stall,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   maxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: ExpectContinueTimeout,
		DisableCompression:    true,
	})
	hc := &http.Client{Transport: tr, CheckRedirect: client.NoRedirects}
	return &Client{opt: opt, tr: tr, hc: hc}
}

// Close releases the idle connections. Calls in flight are not affected;
// the Client stays usable.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// stalled counts one exchange aborted by the stall watchdog.
func (c *Client) stalled() {
	c.opt.Metrics.Counter("io_timeouts_total", "role", storageapi.RoleName, "op", "replica_stall").Inc()
}

// authorize sets the bearer token on req when a Token source is configured.
func (c *Client) authorize(ctx context.Context, req *http.Request) error {
	if c.opt.Token == nil {
		return nil
	}
	tok, err := c.opt.Token(ctx)
	if err != nil {
		return err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}
