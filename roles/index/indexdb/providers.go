package indexdb

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

// Provider limits (docs/index.md §4, §9).
const (
	// MaxBatch is the most records one Announce accepts.
	MaxBatch = 1000
	// MaxProvidersPerObject caps the records kept per b3.
	MaxProvidersPerObject = 64
	// DefaultTTL is provider_ttl_default, applied by DecodeAnnounce when
	// ttl_s is absent.
	DefaultTTL = 600 * time.Second
	// DefaultMaxTTL is provider_ttl_max.
	DefaultMaxTTL = 86400 * time.Second
	// PruneBatch is the janitor's per-transaction limit.
	PruneBatch = 1000
	// maxAddrLen and maxTypeLen bound addr and type in bytes.
	maxAddrLen = 255
	maxTypeLen = 255
)

var (
	nodeRE   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	regionRE = regexp.MustCompile(`^[A-Za-z0-9._-]{0,64}$`)
)

// Provider is a stored provider record.
type Provider struct {
	ID       store.ID
	Node     string
	Addr     string
	Region   string
	Type     string
	LastSeen time.Time
	Expires  time.Time
}

// providerJSON is the stored value (docs/index.md §9).
type providerJSON struct {
	Addr       string `json:"addr"`
	Region     string `json:"region"`
	Type       string `json:"type"`
	LastSeenMs int64  `json:"last_seen_ms"`
	ExpiresMs  int64  `json:"expires_ms"`
}

// AnnounceResult counts a batch: Accepted records with TTL > 0, Withdrawn
// records with TTL 0 (including withdrawals of unknown records, a no-op).
type AnnounceResult struct {
	Accepted  int
	Withdrawn int
}

// Announce validates every record, then applies the whole batch in one
// transaction (all or nothing). A re-announce of (ID, Node) replaces addr,
// region and type and sets LastSeen = now, Expires = now + TTL, replacing
// its expiry key. A new node for an ID that already has
// MaxProvidersPerObject records evicts the record expiring soonest (ties:
// smallest node). Within a batch, later records for the same key win.
// Errors: *indexapi.InvalidError (indexapi.ErrInvalid) naming the first bad record.
func (db *DB) Announce(ctx context.Context, recs []indexapi.Announcement) (AnnounceResult, error) {
	if err := db.validateBatch(recs); err != nil {
		return AnnounceResult{}, err
	}
	now, perObject := db.nowMs(), db.Limits().ProvidersPerObject
	var res AnnounceResult
	err := db.kv.Update(ctx, func(tx kv.Tx) error {
		res = AnnounceResult{}
		for _, a := range recs {
			if err := applyAnnouncement(tx, a, now, perObject); err != nil {
				return err
			}
			if a.TTL == 0 {
				res.Withdrawn++
			} else {
				res.Accepted++
			}
		}
		return nil
	})
	if err != nil {
		return AnnounceResult{}, err
	}
	return res, nil
}

// validateBatch checks the batch size and every record.
func (db *DB) validateBatch(recs []indexapi.Announcement) error {
	if len(recs) == 0 || len(recs) > MaxBatch {
		return &indexapi.InvalidError{Index: -1, Field: "records", Msg: fmt.Sprintf("want 1–%d records, got %d", MaxBatch, len(recs))}
	}
	for i, a := range recs {
		if field, msg := db.checkAnnouncement(a); field != "" {
			return &indexapi.InvalidError{Index: i, Field: field, Msg: msg}
		}
	}
	return nil
}

// checkAnnouncement returns the first bad field and why, or "", "".
func (db *DB) checkAnnouncement(a indexapi.Announcement) (field, msg string) {
	maxTTL := db.Limits().MaxTTL
	addrMsg := checkAddr(a.Addr)
	switch {
	case !nodeRE.MatchString(a.Node):
		return "node", "want ^[A-Za-z0-9._-]{1,64}$"
	case addrMsg != "":
		return "addr", addrMsg
	case a.TTL < 0 || a.TTL > maxTTL:
		return "ttl_s", fmt.Sprintf("want 0–%d", int64(maxTTL/time.Second))
	case !regionRE.MatchString(a.Region):
		return "region", "want ^[A-Za-z0-9._-]{0,64}$"
	case !printableASCII(a.Type, maxTypeLen):
		return "type", "want printable ASCII, at most 255 bytes"
	}
	return "", ""
}

// checkAddr validates a storage base URL: absolute http or https, ≤ 255
// bytes, a host, no userinfo, query or fragment. It returns "" when valid.
func checkAddr(s string) string {
	if s == "" || len(s) > maxAddrLen {
		return "want an absolute http(s) URL of 1–255 bytes"
	}
	if strings.ContainsAny(s, "?#") {
		return "query and fragment not allowed"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "scheme must be http or https"
	case u.Host == "" || u.Hostname() == "":
		return "host required"
	case u.User != nil:
		return "userinfo not allowed"
	}
	return ""
}

// printableASCII reports whether s is at most max bytes of 0x20–0x7e.
func printableASCII(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// applyAnnouncement writes or withdraws one record inside tx, keeping at
// most perObject records for a.ID.
func applyAnnouncement(tx kv.Tx, a indexapi.Announcement, now time.Time, perObject int) error {
	provs, exp := tx.Bucket(bucketProviders), tx.Bucket(bucketExpiry)
	key := providerKey(a.ID, a.Node)
	old := provs.Get(key)
	if old != nil {
		if err := dropRecord(provs, exp, key, old); err != nil {
			return err
		}
	}
	if a.TTL == 0 {
		return nil
	}
	if old == nil {
		if err := enforceCap(provs, exp, a.ID, perObject); err != nil {
			return err
		}
	}
	val := providerJSON{Addr: a.Addr, Region: a.Region, Type: a.Type,
		LastSeenMs: now.UnixMilli(), ExpiresMs: now.Add(a.TTL).UnixMilli()}
	raw, err := json.Marshal(val)
	if err != nil {
		return err
	}
	if err := provs.Put(key, raw); err != nil {
		return err
	}
	return exp.Put(expiryKey(val.ExpiresMs, key), []byte{})
}

// dropRecord deletes the provider record at key (whose value is raw) and
// its expiry key.
func dropRecord(provs, exp kv.Bucket, key, raw []byte) error {
	var old providerJSON
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("indexdb: decode provider: %w", err)
	}
	if err := exp.Delete(expiryKey(old.ExpiresMs, key)); err != nil {
		return err
	}
	return provs.Delete(key)
}

// capEntry is one record considered for eviction.
type capEntry struct {
	key, raw  []byte
	expiresMs int64
}

// enforceCap evicts the soonest-expiring records of id until one more fits
// under limit (providers_per_object).
func enforceCap(provs, exp kv.Bucket, id store.ID, limit int) error {
	var entries []capEntry
	c := provs.Cursor()
	for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
		var p providerJSON
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("indexdb: decode provider: %w", err)
		}
		entries = append(entries, capEntry{bytes.Clone(k), bytes.Clone(v), p.ExpiresMs})
	}
	if len(entries) < limit {
		return nil
	}
	slices.SortFunc(entries, func(a, b capEntry) int {
		return cmp.Or(cmp.Compare(a.expiresMs, b.expiresMs), bytes.Compare(a.key, b.key))
	})
	for _, e := range entries[:len(entries)-limit+1] {
		if err := dropRecord(provs, exp, e.key, e.raw); err != nil {
			return err
		}
	}
	return nil
}

// Providers returns the live records of id (Expires after now; expired ones
// are filtered even before Prune removes them): records in region first
// (when region is not empty), then the freshest LastSeen, then node id.
// limit ≤ 0 returns all. None → an empty slice and nil error (the role
// decides between a peer lookup and 404).
func (db *DB) Providers(ctx context.Context, id store.ID, region string, limit int) ([]Provider, error) {
	nowMs := db.nowMs().UnixMilli()
	var out []Provider
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		var err error
		out, err = liveProviders(tx, id, nowMs)
		return err
	})
	if err != nil {
		return nil, err
	}
	sortProviders(out, region)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// liveProviders reads the unexpired records of id.
func liveProviders(tx kv.Tx, id store.ID, nowMs int64) ([]Provider, error) {
	var out []Provider
	c := tx.Bucket(bucketProviders).Cursor()
	for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
		var p providerJSON
		if err := json.Unmarshal(v, &p); err != nil {
			return nil, fmt.Errorf("indexdb: decode provider: %w", err)
		}
		if p.ExpiresMs <= nowMs {
			continue
		}
		out = append(out, Provider{ID: id, Node: string(k[len(id):]), Addr: p.Addr, Region: p.Region,
			Type: p.Type, LastSeen: time.UnixMilli(p.LastSeenMs).UTC(), Expires: time.UnixMilli(p.ExpiresMs).UTC()})
	}
	return out, nil
}

// sortProviders orders ps: region matches first, newest LastSeen, node.
func sortProviders(ps []Provider, region string) {
	inRegion := func(p Provider) int {
		if region != "" && p.Region == region {
			return 0
		}
		return 1
	}
	slices.SortFunc(ps, func(a, b Provider) int {
		return cmp.Or(cmp.Compare(inRegion(a), inRegion(b)),
			b.LastSeen.Compare(a.LastSeen), strings.Compare(a.Node, b.Node))
	})
}

// Prune is one janitor step, one transaction: it walks expiry in key order
// (soonest expiry first), deletes each expired record (Expires ≤ now) with
// its expiry key, stops at the first unexpired key or after limit keys
// (limit ≤ 0 means PruneBatch), and returns how many expiry entries it
// removed. The caller loops while the result equals limit, yielding between
// calls.
func (db *DB) Prune(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		limit = PruneBatch
	}
	nowMs := db.nowMs().UnixMilli()
	var n int
	err := db.kv.Update(ctx, func(tx kv.Tx) error {
		var err error
		n, err = pruneExpired(tx, nowMs, limit)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// pruneExpired deletes up to limit expired entries inside tx. A provider
// record is deleted only when its expires_ms still equals the key's, so a
// stale expiry key never removes a refreshed record.
func pruneExpired(tx kv.Tx, nowMs int64, limit int) (int, error) {
	provs, exp := tx.Bucket(bucketProviders), tx.Bucket(bucketExpiry)
	n := 0
	c := exp.Cursor()
	for k, _ := c.First(); k != nil && n < limit; k, _ = c.Next() {
		if len(k) >= 8 && int64(binary.BigEndian.Uint64(k)) > nowMs {
			break
		}
		key := bytes.Clone(k)
		if err := pruneEntry(provs, exp, key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// pruneEntry deletes the expiry key ek and, if it still matches, its record.
// A malformed key (shorter than the 8-byte time) is just deleted.
func pruneEntry(provs, exp kv.Bucket, ek []byte) error {
	if len(ek) <= 8 {
		return exp.Delete(ek)
	}
	pk := ek[8:]
	if raw := provs.Get(pk); raw != nil {
		var p providerJSON
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("indexdb: decode provider: %w", err)
		}
		if p.ExpiresMs == int64(binary.BigEndian.Uint64(ek)) {
			if err := provs.Delete(pk); err != nil {
				return err
			}
		}
	}
	return exp.Delete(ek)
}

// providerKey is the raw 32-byte digest + node.
func providerKey(id store.ID, node string) []byte {
	return append(id[:len(id):len(id)], node...)
}

// expiryKey is u64 big-endian expires_ms + providerKey.
func expiryKey(expiresMs int64, pk []byte) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(pk)), uint64(expiresMs)), pk...)
}
