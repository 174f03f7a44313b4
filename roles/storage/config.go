// Package storage is ron's storage role: a BLAKE3 content-addressed object
// store served over HTTP (docs/storage.md), its client interface with local and
// HTTP implementations, and its CLI commands (put, get, cat, stat).
package storage

import (
	"fmt"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/config"
)

// Config is the [storage] section (docs/storage.md §7).
type Config struct {
	Listen        string `koanf:"listen" help:"storage listener address (restart to change)"`
	AdvertiseURL  string `koanf:"advertise_url" help:"URL other nodes use; derived from listen when empty"`
	httpx.Ingress `koanf:",squash"`

	Engine             string        `koanf:"engine" help:"fs or memory; amnesia = true forces memory"`
	MaxObjectBytes     config.Size   `koanf:"max_object_bytes" help:"largest object accepted"`
	MinFreeBytes       config.Size   `koanf:"min_free_bytes" help:"writes are refused (507) below this free space"`
	MemoryMaxBytes     config.Size   `koanf:"memory_max_bytes" help:"memory engine capacity"`
	UploadStallTimeout time.Duration `koanf:"upload_stall_timeout" help:"no upload bytes for this long → 408"`
	StreamWriteTimeout time.Duration `koanf:"stream_write_timeout" help:"per-chunk write deadline for downloads"`
	admit.QueueConfig  `koanf:",squash"`
	GetWorkers         int           `koanf:"get_workers" help:"GET pool size (GET, HEAD, chunks, inventory, has, DELETE)"`
	PutWorkers         int           `koanf:"put_workers" help:"PUT pool size (POST, PUT)"`
	PublicReads        bool          `koanf:"public_reads" help:"false → GET and HEAD need a storage:read token"`
	IndexURLs          []string      `koanf:"index_urls" help:"index base URLs to announce to when no index role runs in this process"`
	IndexToken         string        `koanf:"index_token" secret:"true" help:"bearer token (index:write) for index_urls; empty = minted from the root key"`
	ProviderTTL        time.Duration `koanf:"provider_ttl" help:"TTL of announced provider records (1s–86400s); re-provide every TTL/2"`
	AnnounceQueue      int           `koanf:"announce_queue" help:"announce queue capacity (drop_oldest)"`
	SidecarCacheBytes  config.Size   `koanf:"sidecar_cache_bytes" help:"parsed sidecar LRU size"`
	QuarantineKeep     time.Duration `koanf:"quarantine_keep" help:"how long quarantined files are kept"`

	// Cluster mode only (docs/cluster.md §4, §8); restart to change.
	ReplicationFactor int         `koanf:"replication_factor" help:"copies of each object in cluster mode (1–5)"`
	Redundancy        string      `koanf:"redundancy" help:"replicas, or ec (erasure coding: not built yet, writes keep replicas)"`
	ECData            int         `koanf:"ec_data" help:"erasure coding data shards"`
	ECParity          int         `koanf:"ec_parity" help:"erasure coding parity shards (ec_data + ec_parity ≤ 32)"`
	ECMinBytes        config.Size `koanf:"ec_min_bytes" help:"smallest object erasure coding applies to"`
}

// DefaultConfig returns the spec's defaults.
func DefaultConfig() Config {
	return Config{
		Listen:             "127.0.0.1:5303",
		Ingress:            httpx.DefaultIngress(),
		Engine:             "fs",
		MaxObjectBytes:     8 << 30,
		MinFreeBytes:       1 << 30,
		MemoryMaxBytes:     1 << 30,
		UploadStallTimeout: 5 * time.Second,
		StreamWriteTimeout: 5 * time.Second,
		QueueConfig:        admit.QueueConfig{QueueCapacity: 512, QueueTimeout: 5 * time.Second},
		GetWorkers:         64,
		PutWorkers:         16,
		PublicReads:        true,
		IndexURLs:          []string{},
		ProviderTTL:        600 * time.Second,
		AnnounceQueue:      1024,
		SidecarCacheBytes:  64 << 20,
		QuarantineKeep:     168 * time.Hour,
		ReplicationFactor:  2,
		Redundancy:         RedundancyReplicas,
		ECData:             6,
		ECParity:           3,
		ECMinBytes:         4 << 20,
	}
}

// Redundancy modes (storage.redundancy).
const (
	RedundancyReplicas = "replicas"
	// RedundancyEC is accepted by validation; erasure coding (docs/cluster.md
	// §8) is not built, so writes keep replicas.
	RedundancyEC = "ec"
)

// Replication bounds (docs/cluster.md §10).
const (
	MinReplicationFactor = 1
	MaxReplicationFactor = 5
	MaxECShards          = 32
)

// Validate checks values that parse but make no sense.
func (c Config) Validate() error {
	switch {
	case c.Engine != "fs" && c.Engine != "memory":
		return fmt.Errorf("storage.engine: %q is not fs or memory", c.Engine)
	case c.MaxObjectBytes <= 0:
		return fmt.Errorf("storage.max_object_bytes must be positive")
	case c.GetWorkers < 1 || c.PutWorkers < 1 || c.AnnounceQueue < 1:
		return fmt.Errorf("storage: get_workers, put_workers and announce_queue must be at least 1")
	case c.UploadStallTimeout <= 0 || c.StreamWriteTimeout <= 0:
		return fmt.Errorf("storage: timeouts must be positive")
	}
	if err := c.QueueConfig.Validate(storageapi.RoleName); err != nil {
		return err
	}
	if err := c.validateRedundancy(); err != nil {
		return err
	}
	return c.validateAnnounce()
}

// validateRedundancy checks replication_factor, redundancy and the EC
// geometry (checked in both modes so a file stays valid when cluster mode is
// switched on).
func (c Config) validateRedundancy() error {
	switch {
	case c.ReplicationFactor < MinReplicationFactor || c.ReplicationFactor > MaxReplicationFactor:
		return fmt.Errorf("storage.replication_factor: %d is outside %d–%d", c.ReplicationFactor, MinReplicationFactor, MaxReplicationFactor)
	case c.Redundancy != RedundancyReplicas && c.Redundancy != RedundancyEC:
		return fmt.Errorf("storage.redundancy: %q is not %s or %s", c.Redundancy, RedundancyReplicas, RedundancyEC)
	case c.ECData < 1 || c.ECParity < 1:
		return fmt.Errorf("storage: ec_data and ec_parity must be at least 1")
	case c.ECData+c.ECParity > MaxECShards:
		return fmt.Errorf("storage: ec_data + ec_parity = %d is more than %d", c.ECData+c.ECParity, MaxECShards)
	case c.ECMinBytes < 0:
		return fmt.Errorf("storage.ec_min_bytes must not be negative")
	}
	return nil
}

// validateAnnounce checks provider_ttl and index_urls.
func (c Config) validateAnnounce() error {
	if c.ProviderTTL < time.Second || c.ProviderTTL > announcing.MaxProviderTTL {
		return fmt.Errorf("storage.provider_ttl: %v is outside 1s–%v", c.ProviderTTL, announcing.MaxProviderTTL)
	}
	seen := make(map[string]bool, len(c.IndexURLs))
	for _, u := range c.IndexURLs {
		if err := announcing.CheckIndexURL(u); err != nil {
			return fmt.Errorf("storage.index_urls: %w", err)
		}
		if seen[u] {
			return fmt.Errorf("storage.index_urls: %q is listed twice", u)
		}
		seen[u] = true
	}
	return nil
}

// restartOnly lists keys whose change a reload rejects by name.
func (c Config) restartOnly(n Config) []string {
	return config.Changed(storageapi.RoleName, &c, &n, "listen", "advertise_url", "engine", "max_object_bytes",
		"memory_max_bytes", "sidecar_cache_bytes", "queue_capacity", "get_workers", "put_workers",
		"announce_queue", "quarantine_keep", "replication_factor", "redundancy", "ec_data", "ec_parity", "ec_min_bytes")
}
