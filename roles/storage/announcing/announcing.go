// Package announcing is what storage and its index sinks share
// (docs/storage.md §5): the provider record storage announces, the Sink
// interface a sink implements and the optional interfaces it may add, and
// the checks of where records may go. Storage (roles/storage) sends
// through a Sink; roles/storage/indexsink is the sink to an index role.
package announcing

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ronhq/ron/store"
)

// Record is one provider record sent to the index: "node holds id", with
// the object's stored Content-Type. A PUT announces with provider_ttl, a
// re-provide pass with the TTL of docs/storage.md §5, DELETE and quarantine
// with TTL 0, which withdraws the record.
type Record struct {
	ID   store.ID
	Type string
	TTL  time.Duration
}

// Sink receives batches of provider records. The storage module plugs in
// roles/storage/indexsink (the local index role, else storage.index_urls);
// with no index there is no sink and announcing is off (status says why).
// A Sink must be safe for concurrent use: the announce and reprovide
// workers both send through it.
type Sink interface {
	// Announce delivers one batch within ctx's deadline. Errors are retried
	// unless they are an *httpx.Error with a 4xx status other than 429.
	Announce(ctx context.Context, batch []Record) error
}

// Retargeter is implemented by sinks that follow hot reloads of
// storage.index_urls and storage.index_token. The role calls CheckRetarget
// from CheckApply, Retarget from Start and Apply, and Target for status.
type Retargeter interface {
	Sink
	// Target describes where records go, e.g. "local index" or
	// "index_urls (2)".
	Target() string
	// CheckRetarget reports whether Retarget(urls, …) would succeed,
	// changing nothing.
	CheckRetarget(urls []string) error
	// Retarget sends later batches to urls, authenticated with token ("" =
	// the sink's own token source). On error nothing changes.
	Retarget(urls []string, token string) error
}

// IndexWatcher is implemented by sinks that follow a cluster's index
// members (roles/storage/indexsink in cluster mode). With such a sink the
// reprovider also starts a pass reprovideSettle after the alive index
// members changed, since provider records then have new owners
// (docs/storage.md §5).
type IndexWatcher interface {
	// IndexChanges returns a channel signalled (coalescing, never closed)
	// after membership changes, and a cancel that stops the signals.
	IndexChanges() (<-chan struct{}, func())
	// IndexMembers identifies the alive index members: it differs exactly
	// when one joined, departed or changed its URL.
	IndexMembers() string
}

// MaxProviderTTL is the longest provider record TTL an index accepts
// (docs/index.md §4: ttl_s ≤ provider_ttl_max = 86400).
const MaxProviderTTL = 86400 * time.Second

// CheckIndexURL validates one storage.index_urls entry: an absolute http or
// https URL with a host and no userinfo, query or fragment.
func CheckIndexURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", raw)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q: host required", raw)
	case u.User != nil:
		return fmt.Errorf("%q: userinfo not allowed", raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%q: query and fragment not allowed", raw)
	}
	return nil
}
