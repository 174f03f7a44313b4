package registry

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime/config"
)

// Retention policies (retention_policy).
const (
	PolicyOff     = "off"
	PolicyByAge   = "by-age"
	PolicyByCount = "by-count"
	PolicyBySize  = "by-size"
)

// Config is the [registry] section (docs/registry.md §7). Keys marked live
// change on Role.Apply; a change to any other key rejects the whole reload
// by name.
type Config struct {
	Listen        string `koanf:"listen" help:"registry listener address (restart to change)"`
	AdvertiseURL  string `koanf:"advertise_url" help:"URL other nodes and clients use; http://<listen> when empty"`
	httpx.Ingress `koanf:",squash"`

	PublicReads bool `koanf:"public_reads" help:"false → reads need a registry:read token"`
	ReadOnly    bool `koanf:"read_only" help:"freeze writes (503 not_ready, reason maintenance)"`

	TrustRoots     string `koanf:"trust_roots" help:"trust-roots file for genesis (used only when no log exists; restart-only)"`
	TrustRootsB3   string `koanf:"trust_roots_b3" help:"b3: pin of the trust-roots file's JCS (restart-only)"`
	AllowDevSigner bool   `koanf:"allow_dev_signer" help:"without a log and trust roots, bootstrap with a dev signer (org:dev#k1, 1 of 1)"`
	LogOrigin      string `koanf:"log_origin" help:"checkpoint origin; empty = ron-registry/<log-id>; fixed once the log exists"`

	ProposalTTL      time.Duration `koanf:"proposal_ttl" help:"lifetime of new proposals (1m–720h)"`
	TombstoneTTL     time.Duration `koanf:"tombstone_ttl" help:"how long closed proposals stay readable (≥ 1h)"`
	MaxOpenProposals int           `koanf:"max_open_proposals" help:"open proposals at once (1–100000); over → 429 busy"`
	QueueProposals   int           `koanf:"queue_proposals" help:"proposal queue capacity (1–65536; restart-only)"`
	QueueApprovals   int           `koanf:"queue_approvals" help:"approval queue capacity (1–65536; restart-only)"`
	QueueCommits     int           `koanf:"queue_commits" help:"commit queue capacity (1–65536; restart-only)"`
	MaxPayloadBytes  config.Size   `koanf:"max_payload_bytes" help:"largest canonical payload (1024–49152 bytes)"`
	ClockSkew        time.Duration `koanf:"clock_skew" help:"how far created_at and signed_at may lie in the future (0–1h)"`
	CommitTimeout    time.Duration `koanf:"commit_timeout" help:"how long a write waits for the committer (100ms–30s)"`
	GroupCommitMax   int           `koanf:"group_commit_max" help:"messages added to one group commit (1–4096)"`
	SegmentRecords   int           `koanf:"segment_records" help:"versions per log segment (multiple of 256, 256–65536; restart-only)"`
	CheckpointMaxLag time.Duration `koanf:"checkpoint_max_lag" help:"uncovered versions older than this make writes unready (≥ 1s)"`

	RetentionPolicy      string        `koanf:"retention_policy" help:"off, by-age, by-count or by-size"`
	RetentionMaxAge      time.Duration `koanf:"retention_max_age" help:"by-age: segments whose last commit is older go (≥ 1h)"`
	RetentionMaxCount    int           `koanf:"retention_max_count" help:"by-count: newest versions always kept (≥ 100)"`
	RetentionTargetBytes config.Size   `koanf:"retention_target_bytes" help:"by-size: oldest segments go while the log is larger (≥ 32MiB)"`
	RetentionInterval    time.Duration `koanf:"retention_interval" help:"how often retention runs (≥ 1m)"`

	VerifySlice        time.Duration `koanf:"verify_slice" help:"deep verifier work per slice, then a pause 4× as long (1ms–1s)"`
	VerifyFullInterval time.Duration `koanf:"verify_full_interval" help:"period of the deep verifier's full pass (≥ 1h)"`

	StreamHeartbeat  time.Duration `koanf:"stream_heartbeat" help:"SSE heartbeat after this long without a write (1s–60s)"`
	StreamMaxClients int           `koanf:"stream_max_clients" help:"concurrent SSE streams (1–65536); over → 429 busy"`
	StreamMaxLag     int           `koanf:"stream_max_lag" help:"versions a stream may fall behind before it skips to HEAD (≥ 16)"`
}

// DefaultConfig returns the docs/registry.md §7 defaults.
func DefaultConfig() Config {
	return Config{
		Listen:               "127.0.0.1:9444",
		Ingress:              httpx.DefaultIngress(),
		PublicReads:          true,
		AllowDevSigner:       true,
		ProposalTTL:          72 * time.Hour,
		TombstoneTTL:         168 * time.Hour,
		MaxOpenProposals:     1024,
		QueueProposals:       512,
		QueueApprovals:       512,
		QueueCommits:         512,
		MaxPayloadBytes:      descriptor.MaxPayloadCeiling,
		ClockSkew:            5 * time.Minute,
		CommitTimeout:        2 * time.Second,
		GroupCommitMax:       256,
		SegmentRecords:       segment.DefaultSegmentRecords,
		CheckpointMaxLag:     60 * time.Second,
		RetentionPolicy:      PolicyByAge,
		RetentionMaxAge:      720 * time.Hour,
		RetentionMaxCount:    10000,
		RetentionTargetBytes: 1 << 30,
		RetentionInterval:    10 * time.Minute,
		VerifySlice:          20 * time.Millisecond,
		VerifyFullInterval:   24 * time.Hour,
		StreamHeartbeat:      5 * time.Second,
		StreamMaxClients:     1024,
		StreamMaxLag:         1024,
	}
}

// Validate checks every docs/registry.md §7 range. Errors name the key as
// "registry.<key>: …".
func (c Config) Validate() error {
	for _, check := range []func() error{c.checkListener, c.checkBootstrap, c.checkProposals,
		c.checkLog, c.checkRetention, c.checkStream} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// keyError is a validation error naming "registry.<key>".
func keyError(key, format string, args ...any) error {
	return fmt.Errorf("registry.%s: %s", key, fmt.Sprintf(format, args...))
}

// checkListener checks listen, advertise_url and the ingress keys.
func (c Config) checkListener() error {
	switch {
	case strings.TrimSpace(c.Listen) == "":
		return keyError("listen", "must not be empty")
	case c.MaxInflight < 1:
		return keyError("max_inflight", "must be at least 1, got %d", c.MaxInflight)
	case c.RPS < 0 || c.RPS != c.RPS:
		return keyError("rps", "must be 0 (off) or positive, got %v", c.RPS)
	case c.MaxConnsPerIP < 1:
		return keyError("max_conns_per_ip", "must be at least 1, got %d", c.MaxConnsPerIP)
	}
	if c.AdvertiseURL != "" {
		if err := checkURL(c.AdvertiseURL); err != nil {
			return keyError("advertise_url", "%v", err)
		}
	}
	return nil
}

// checkURL accepts an absolute http(s) URL with a host and no user info,
// query or fragment.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", raw)
	case u.Hostname() == "":
		return fmt.Errorf("%q: host required", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%q: user info, query and fragment are not allowed", raw)
	}
	return nil
}

// checkBootstrap checks trust_roots_b3 and log_origin.
func (c Config) checkBootstrap() error {
	if c.TrustRootsB3 != "" {
		if !descriptor.IsB3(c.TrustRootsB3) {
			return keyError("trust_roots_b3", "want b3: and 64 lowercase hex digits, got %q", c.TrustRootsB3)
		}
		if c.TrustRoots == "" {
			return keyError("trust_roots_b3", "set without registry.trust_roots")
		}
	}
	if c.LogOrigin != "" {
		if err := tiles.CheckOrigin(c.LogOrigin); err != nil {
			return keyError("log_origin", "%v", err)
		}
	}
	return nil
}

// checkProposals checks the proposal, payload and committer keys.
func (c Config) checkProposals() error {
	switch {
	case c.ProposalTTL < time.Minute || c.ProposalTTL > 720*time.Hour:
		return keyError("proposal_ttl", "must be 1m–720h, got %v", c.ProposalTTL)
	case c.TombstoneTTL < time.Hour:
		return keyError("tombstone_ttl", "must be at least 1h, got %v", c.TombstoneTTL)
	case c.MaxOpenProposals < 1 || c.MaxOpenProposals > 100000:
		return keyError("max_open_proposals", "must be 1–100000, got %d", c.MaxOpenProposals)
	case c.MaxPayloadBytes < 1024 || c.MaxPayloadBytes > descriptor.MaxPayloadCeiling:
		return keyError("max_payload_bytes", "must be 1024–%d, got %d", descriptor.MaxPayloadCeiling, c.MaxPayloadBytes)
	case c.ClockSkew < 0 || c.ClockSkew > time.Hour:
		return keyError("clock_skew", "must be 0–1h, got %v", c.ClockSkew)
	case c.CommitTimeout < 100*time.Millisecond || c.CommitTimeout > 30*time.Second:
		return keyError("commit_timeout", "must be 100ms–30s, got %v", c.CommitTimeout)
	case c.GroupCommitMax < 1 || c.GroupCommitMax > 4096:
		return keyError("group_commit_max", "must be 1–4096, got %d", c.GroupCommitMax)
	}
	for _, q := range []struct {
		key string
		n   int
	}{{"queue_proposals", c.QueueProposals}, {"queue_approvals", c.QueueApprovals}, {"queue_commits", c.QueueCommits}} {
		if q.n < 1 || q.n > 65536 {
			return keyError(q.key, "must be 1–65536, got %d", q.n)
		}
	}
	return nil
}

// checkLog checks segment_records, checkpoint_max_lag and the verifier keys.
func (c Config) checkLog() error {
	switch {
	case c.SegmentRecords < segment.MinSegmentRecords || c.SegmentRecords > segment.MaxSegmentRecords ||
		c.SegmentRecords%256 != 0:
		return keyError("segment_records", "must be a multiple of 256 in 256–65536, got %d", c.SegmentRecords)
	case c.CheckpointMaxLag < time.Second:
		return keyError("checkpoint_max_lag", "must be at least 1s, got %v", c.CheckpointMaxLag)
	case c.VerifySlice < time.Millisecond || c.VerifySlice > time.Second:
		return keyError("verify_slice", "must be 1ms–1s, got %v", c.VerifySlice)
	case c.VerifyFullInterval < time.Hour:
		return keyError("verify_full_interval", "must be at least 1h, got %v", c.VerifyFullInterval)
	}
	return nil
}

// checkRetention checks the retention keys.
func (c Config) checkRetention() error {
	switch c.RetentionPolicy {
	case PolicyOff, PolicyByAge, PolicyByCount, PolicyBySize:
	default:
		return keyError("retention_policy", "want off, by-age, by-count or by-size, got %q", c.RetentionPolicy)
	}
	switch {
	case c.RetentionMaxAge < time.Hour:
		return keyError("retention_max_age", "must be at least 1h, got %v", c.RetentionMaxAge)
	case c.RetentionMaxCount < 100:
		return keyError("retention_max_count", "must be at least 100, got %d", c.RetentionMaxCount)
	case c.RetentionTargetBytes < 32<<20:
		return keyError("retention_target_bytes", "must be at least 33554432 (32MiB), got %d", c.RetentionTargetBytes)
	case c.RetentionInterval < time.Minute:
		return keyError("retention_interval", "must be at least 1m, got %v", c.RetentionInterval)
	}
	return nil
}

// checkStream checks the SSE keys.
func (c Config) checkStream() error {
	switch {
	case c.StreamHeartbeat < time.Second || c.StreamHeartbeat > time.Minute:
		return keyError("stream_heartbeat", "must be 1s–60s, got %v", c.StreamHeartbeat)
	case c.StreamMaxClients < 1 || c.StreamMaxClients > 65536:
		return keyError("stream_max_clients", "must be 1–65536, got %d", c.StreamMaxClients)
	case c.StreamMaxLag < 16:
		return keyError("stream_max_lag", "must be at least 16, got %d", c.StreamMaxLag)
	}
	return nil
}

// limits are the committer's live limits of c.
func (c Config) limits() committer.Limits {
	return committer.Limits{
		Limits:           descriptor.Limits{MaxPayloadBytes: int(c.MaxPayloadBytes), ClockSkew: c.ClockSkew},
		ProposalTTL:      c.ProposalTTL,
		TombstoneTTL:     c.TombstoneTTL,
		MaxOpenProposals: c.MaxOpenProposals,
		CommitTimeout:    c.CommitTimeout,
		GroupCommitMax:   c.GroupCommitMax,
	}
}
