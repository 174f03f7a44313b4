package descriptor

import "time"

// Fixed limits of docs/registry.md §1.
const (
	// MaxPayloadCeiling is the hard ceiling on a canonical payload (bytes);
	// max_payload_bytes may only lower it.
	MaxPayloadCeiling = 49152
	// MaxItems is the most items a DescriptorSet may hold.
	MaxItems = 2048
	// MaxDepth is the deepest container nesting, the payload object being
	// depth 1, items 2, an item 3 and an item's meta 4.
	MaxDepth = 16
	// MaxSafeInt is 2^53−1: every number, integer or not, lies within
	// ±MaxSafeInt (beyond it a JCS number is an integer that a double
	// cannot carry exactly).
	MaxSafeInt = 1<<53 - 1
	// MaxNoteBytes bounds the optional note.
	MaxNoteBytes = 1024
	// MaxTimeBytes bounds every RFC 3339 time stamp.
	MaxTimeBytes = 40
	// MaxSigners bounds n, and so the number of signer items.
	MaxSigners = 32
	// MaxURLBytes bounds each node URL.
	MaxURLBytes = 256
)

// Limits are the live-configurable bounds of docs/registry.md §7.
type Limits struct {
	// MaxPayloadBytes bounds the canonical payload; ≤ 0 or above
	// MaxPayloadCeiling means MaxPayloadCeiling.
	MaxPayloadBytes int
	// ClockSkew is how far created_at and signed_at may lie past now;
	// negative means 0.
	ClockSkew time.Duration
}

// DefaultLimits are the docs/registry.md §7 defaults: 49,152 bytes and 5 minutes.
func DefaultLimits() Limits {
	return Limits{MaxPayloadBytes: MaxPayloadCeiling, ClockSkew: 5 * time.Minute}
}

func (l Limits) maxPayload() int {
	if l.MaxPayloadBytes <= 0 || l.MaxPayloadBytes > MaxPayloadCeiling {
		return MaxPayloadCeiling
	}
	return l.MaxPayloadBytes
}

func (l Limits) skew() time.Duration {
	return max(l.ClockSkew, 0)
}
