package tiles

import (
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/runtime"
)

// Defaults used when a Settings field is zero.
const (
	// DefaultCacheControl is tiles_cache_control's default.
	DefaultCacheControl = "public, max-age=60"
	// DefaultMaxRanges is max_ranges' default.
	DefaultMaxRanges = 128
	// DefaultTileMaxDecodedBytes is tile_max_decoded_bytes' default (8 MiB).
	DefaultTileMaxDecodedBytes = 8 << 20
)

// Settings are the live settings the handlers read per request.
type Settings struct {
	// TilesCacheControl is the Cache-Control of packs, tiles and TileJSON
	// ("" = DefaultCacheControl).
	TilesCacheControl string
	// PublicURL, when set, is the TileJSON base URL (a trailing "/" is
	// dropped); the forwarded headers are then not consulted.
	PublicURL string
	// MaxRanges caps the parts of a multi-range request (0 = 128).
	MaxRanges int
	// TileMaxDecodedBytes caps a tile decoded on the fly (0 = 8 MiB).
	TileMaxDecodedBytes int64
	// TrustedProxies are the peers, besides loopback, whose X-Forwarded-Proto,
	// -Host and -Prefix headers shape TileJSON's base URL.
	TrustedProxies []netip.Prefix
}

// withDefaults fills zero values.
func (s Settings) withDefaults() Settings {
	if s.TilesCacheControl == "" {
		s.TilesCacheControl = DefaultCacheControl
	}
	if s.MaxRanges <= 0 {
		s.MaxRanges = DefaultMaxRanges
	}
	if s.TileMaxDecodedBytes <= 0 {
		s.TileMaxDecodedBytes = DefaultTileMaxDecodedBytes
	}
	return s
}

// Options configure New.
type Options struct {
	Packs    *packs.Set
	Settings func() Settings // read per request; nil = all defaults
	Metrics  *runtime.Metrics
	Log      zerolog.Logger
	// Now is the time answers are built at, and their Date; nil = time.Now,
	// with the Date left to net/http (which stamps it when it writes the
	// headers, so it is never earlier than a Last-Modified clamped to Now).
	Now func() time.Time
}

// Tiles serves /tiles and /packs from a pack set. It is safe for concurrent
// use and holds no goroutines.
type Tiles struct {
	packs    *packs.Set
	settings func() Settings
	now      func() time.Time
	log      zerolog.Logger
	met      *tileMetrics
	cache    *tileCache // warm tiles (TileCacheBytes)
	hv       headerVals // formatted header values
	date     bool       // set Date (Options.Now given)
}

// New returns the handlers over opt.Packs (required).
func New(opt Options) *Tiles {
	t := &Tiles{packs: opt.Packs, settings: opt.Settings, now: opt.Now, log: opt.Log,
		met: newTileMetrics(opt.Metrics), cache: newTileCache(TileCacheBytes), date: opt.Now != nil}
	if t.settings == nil {
		t.settings = func() Settings { return Settings{} }
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t
}

// current returns the settings in force with defaults applied.
func (t *Tiles) current() Settings { return t.settings().withDefaults() }
