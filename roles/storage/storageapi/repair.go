package storageapi

import "time"

// MaxRepairBoost is the longest repair pace boost an admin may ask for
// (docs/cluster.md §5: S ≤ 86400 s): the limit of duration_s in
// RepairPaceRequest, which the repair engine's pacer enforces too.
const MaxRepairBoost = 24 * time.Hour

// RepairPaceRequest is the body of the admin listener's
// POST /api/v1/repair/pace: a pace in bytes per second (0 pauses repair)
// for duration_s seconds (1–86400), after which the configured repair_pace
// returns.
type RepairPaceRequest struct {
	BytesPerS *int64 `json:"bytes_per_s"`
	DurationS *int64 `json:"duration_s"`
}

// RepairPaceReply answers POST /api/v1/repair/pace.
type RepairPaceReply struct {
	PaceBytesPerS int64     `json:"pace_bytes_per_s"`
	BoostUntil    time.Time `json:"boost_until"`
}

// RepairObjectRequest is the body of POST /api/v1/repair/object.
type RepairObjectRequest struct {
	B3 string `json:"b3"`
}

// RepairProgress is the repair object of the storage role's status details
// (docs/cluster.md §9), as GET /api/v1/status on the admin listener shows
// it under roles[].details.repair. Counters are those of the pass in
// progress, or of the last pass between passes; UnderReplicated never
// reads lower than the last complete pass while a pass is still scanning.
type RepairProgress struct {
	State           string     `json:"state"` // idle, scanning, transferring, paused
	Pass            uint64     `json:"pass"`  // passes started since the role started
	Scanned         int64      `json:"scanned"`
	Total           int64      `json:"total"` // local objects at pass start
	UnderReplicated int64      `json:"under_replicated"`
	Queued          int64      `json:"queued"`
	Skipped         int64      `json:"skipped"`
	BytesPending    int64      `json:"bytes_pending"` // queued or in flight, plus skipped this pass
	BytesDone       int64      `json:"bytes_done"`
	RateBytesPerS   float64    `json:"rate_bytes_per_s"` // 30 s EWMA
	PaceBytesPerS   int64      `json:"pace_bytes_per_s"`
	BoostUntil      *time.Time `json:"boost_until"`
	EtaS            *float64   `json:"eta_s"` // null when nothing is pending
	Errors          int64      `json:"errors"`
	LastError       string     `json:"last_error"`
}
