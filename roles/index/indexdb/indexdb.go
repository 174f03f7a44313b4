// Package indexdb is the index role's persistent model (docs/index.md §3, §4, §9)
// over a kv.DB: versioned name pointers with compare-and-set, provider
// records with TTLs and a per-object cap, and the expiry index the janitor
// walks. It speaks no HTTP; the role maps its typed errors to the envelope.
//
// Every exported write is exactly one kv Update (one fsynced bbolt
// transaction on the durable engine), so a check and the write it guards are
// atomic. Times come from the injected clock and are kept at millisecond
// precision in UTC.
package indexdb

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/store/kv"
)

// Bucket names and the schema version (docs/index.md §9).
const (
	bucketMeta         = "meta"
	bucketNames        = "names"
	bucketNameVersions = "name_versions"
	bucketProviders    = "providers"
	bucketExpiry       = "expiry"

	schemaKey     = "schema"
	schemaVersion = "1"
)

var allBuckets = []string{bucketMeta, bucketNames, bucketNameVersions, bucketProviders, bucketExpiry,
	bucketCompatAssets, bucketNamesImport}

// DB is the index model. Its methods are safe for concurrent use; it does
// not own the kv.DB (closing it is the caller's job).
type DB struct {
	kv     kv.DB
	now    func() time.Time
	limits atomic.Pointer[Limits]
}

// Limits are the model's tunables (docs/index.md §12). A zero field means its
// default: DefaultMaxTTL, HistoryLen, MaxProvidersPerObject.
type Limits struct {
	MaxTTL             time.Duration // provider_ttl_max: the largest TTL Announce accepts
	HistoryLen         int           // name_history: versions kept per name
	ProvidersPerObject int           // providers_per_object: records kept per b3
}

// withDefaults fills zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxTTL <= 0 {
		l.MaxTTL = DefaultMaxTTL
	}
	if l.HistoryLen <= 0 {
		l.HistoryLen = HistoryLen
	}
	if l.ProvidersPerObject <= 0 {
		l.ProvidersPerObject = MaxProvidersPerObject
	}
	return l
}

// SetLimits replaces the tunables; safe while the DB is in use. Writes
// started afterwards apply them: a shorter history or a lower cap takes
// effect, per name or object, at its next write (History answers at most
// HistoryLen versions at once).
func (db *DB) SetLimits(l Limits) {
	l = l.withDefaults()
	db.limits.Store(&l)
}

// Limits returns the tunables in force.
func (db *DB) Limits() Limits { return *db.limits.Load() }

// Option adjusts Open.
type Option func(*DB)

// WithLimits sets the tunables at Open (see SetLimits).
func WithLimits(l Limits) Option { return func(db *DB) { db.SetLimits(l) } }

// Open prepares kdb for the index: it creates the buckets meta, names,
// name_versions, providers, expiry, compat_assets and names_import when
// missing and
// records schema 1 in meta. A database written with another schema is
// refused with an error matching ErrSchema. now is the clock (time.Now when nil).
func Open(ctx context.Context, kdb kv.DB, now func() time.Time, opts ...Option) (*DB, error) {
	if now == nil {
		now = time.Now
	}
	db := &DB{kv: kdb, now: now}
	db.SetLimits(Limits{})
	for _, o := range opts {
		o(db)
	}
	if err := kdb.Update(ctx, initSchema); err != nil {
		return nil, fmt.Errorf("indexdb: open: %w", err)
	}
	return db, nil
}

// initSchema creates the buckets and checks or writes the schema marker.
func initSchema(tx kv.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch v := meta.Get([]byte(schemaKey)); {
	case v == nil:
		return meta.Put([]byte(schemaKey), []byte(schemaVersion))
	case string(v) != schemaVersion:
		return fmt.Errorf("%w: found %q, want %q", ErrSchema, v, schemaVersion)
	}
	return nil
}

// nowMs returns the clock truncated to milliseconds, in UTC.
func (db *DB) nowMs() time.Time { return db.now().UTC().Truncate(time.Millisecond) }
