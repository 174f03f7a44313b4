package httpcache

import (
	"strconv"
	"strings"
	"time"
)

// CacheName is the cache identifier in Cache-Status (docs/edge.md §2).
const CacheName = "ron-edge"

// CacheStatus is one Cache-Status member (RFC 9211) in the two forms the edge
// sends: a hit with its ttl, or a forward with its reason and the origin's
// status, optionally stored and collapsed.
type CacheStatus struct {
	Hit       bool
	TTL       time.Duration // hits: remaining freshness (negative when stale)
	Fwd       string        // forwards: FwdMiss, FwdStale, FwdRequest or FwdBypass
	FwdStatus int           // forwards: the origin's status code
	Stored    bool          // forwards: the answer was stored
	Collapsed bool          // forwards: the answer came from another request's fill
}

// String formats the member: `ron-edge; hit; ttl=<s>` or
// `ron-edge; fwd=<fwd>; fwd-status=<code>[; stored][; collapsed]`, with ttl
// in whole seconds rounded down.
func (c CacheStatus) String() string {
	var b strings.Builder
	b.WriteString(CacheName)
	if c.Hit {
		b.WriteString("; hit; ttl=")
		b.WriteString(strconv.FormatInt(floorSeconds(c.TTL), 10))
		return b.String()
	}
	b.WriteString("; fwd=")
	b.WriteString(c.Fwd)
	b.WriteString("; fwd-status=")
	b.WriteString(strconv.Itoa(c.FwdStatus))
	if c.Stored {
		b.WriteString("; stored")
	}
	if c.Collapsed {
		b.WriteString("; collapsed")
	}
	return b.String()
}

// AgeValue is the Age field value for a current age: whole seconds rounded
// down, at least 0, at most 2^31 (RFC 9111 §5.1).
func AgeValue(age time.Duration) string {
	return strconv.FormatInt(min(max(0, floorSeconds(age)), MaxDeltaSeconds), 10)
}

// floorSeconds rounds d down to whole seconds (towards −∞).
func floorSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d < 0 && d%time.Second != 0 {
		s--
	}
	return s
}
