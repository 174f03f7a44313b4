package packs

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/edge/mbtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/runtime"
)

// Kind is a pack's file format, taken from its extension.
type Kind string

// Pack kinds.
const (
	KindPMTiles Kind = "pmtiles"
	KindMBTiles Kind = "mbtiles"
)

// Verification levels (verify_packs) and failure policies (pack_errors).
const (
	VerifyBasic = "basic"
	VerifyFull  = "full"
	ErrorsFail  = "fail"
	ErrorsSkip  = "skip"
)

// DefaultPoll is the default pack_poll_interval.
const DefaultPoll = 2 * time.Second

// role labels every metric of this package.
const role = edgeapi.RoleName

// Options configure a Set. Zero values take the spec's defaults.
type Options struct {
	Dir string // packs_dir; "" = no folder
	// DirOptional: Dir may not exist yet (the default <data dir>/packs):
	// while it is missing the set has no folder packs, and a folder made
	// later is picked up by the next poll. Otherwise a missing Dir fails
	// Mount.
	DirOptional bool
	Files       []string // packs: extra pack files
	Verify      string   // "basic" (default) or "full"
	PackErrors  string   // "fail" (default) or "skip"
	// QuickCheckMaxBytes: MBTiles files up to this size get PRAGMA
	// quick_check at basic level; 0 = 64 MiB.
	QuickCheckMaxBytes int64
	// DirCacheBytes bounds the shared PMTiles leaf-directory cache; 0 = 64 MiB.
	DirCacheBytes int64
	Poll          time.Duration // pack_poll_interval; 0 = DefaultPoll
	Metrics       *runtime.Metrics
	Log           zerolog.Logger
}

// withDefaults fills zero values; unknown Verify / PackErrors values read
// as the defaults (the edge config check refuses them first).
func (o Options) withDefaults() Options {
	if o.Verify != VerifyFull {
		o.Verify = VerifyBasic
	}
	if o.PackErrors != ErrorsSkip {
		o.PackErrors = ErrorsFail
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.QuickCheckMaxBytes == 0 {
		o.QuickCheckMaxBytes = mbtiles.DefaultQuickCheckMaxBytes
	}
	if o.DirCacheBytes <= 0 {
		o.DirCacheBytes = pmtiles.DefaultDirCacheBytes
	}
	o.Files = append([]string(nil), o.Files...)
	return o
}

// skip reports whether failed packs are skipped rather than missing.
func (o Options) skip() bool { return o.PackErrors == ErrorsSkip }
