package edge

import (
	"path/filepath"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/live"
	"github.com/ronhq/ron/roles/edge/objects"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiles"
)

// settings are the parsed forms of the config in force, swapped whole on
// reload and read per request.
type settings struct {
	cfg  Config
	live live.Settings
	tile tiles.Settings
	obj  objects.Limits
	cors cors
}

// newSettings derives every building block's settings from cfg (already
// validated).
func newSettings(cfg Config) (*settings, error) {
	trusted, err := cfg.trustedPrefixes()
	if err != nil {
		return nil, err
	}
	ls, err := cfg.liveSettings()
	if err != nil {
		return nil, err
	}
	ls.TrustedProxies = trusted
	return &settings{
		cfg:  cfg,
		live: ls,
		tile: tiles.Settings{TilesCacheControl: cfg.TilesCacheControl, PublicURL: cfg.PublicURL, MaxRanges: cfg.MaxRanges,
			TileMaxDecodedBytes: int64(cfg.TileMaxDecodedBytes), TrustedProxies: trusted},
		obj: objects.Limits{FillMaxBytes: int64(cfg.FillMaxBytes), MaxProviders: cfg.MaxProviders,
			FillTimeout: cfg.FillTimeout, MaxTries: cfg.FillMaxTries, MaxRanges: cfg.MaxRanges},
		cors: cors{origins: cfg.CORSOrigins},
	}, nil
}

// liveSettings are the /assets settings (docs/edge.md §7): the origins with their
// defaults applied, the fill limits and the decode guard of forwarded
// bodies (docs/architecture.md §5 caps: 10×, 8 MiB).
func (c Config) liveSettings() (live.Settings, error) {
	s := live.Settings{FillMaxBytes: int64(c.FillMaxBytes), FillTimeout: c.FillTimeout,
		HeuristicMaxTTL: c.HeuristicMaxTTL, StaleIfUnreachable: c.StaleIfUnreachable, MaxRanges: c.MaxRanges,
		BodyMaxBytes: int64(c.BodyMaxBytes), DecodeMaxBytes: httpx.MaxDecodedBytes, DecodeMaxRatio: httpx.MaxDecodeRatio,
		Origins: make([]live.Origin, 0, len(c.Origins))}
	for _, o := range c.Origins {
		u, err := live.ParseOrigin(o.Name, o.URL, o.AllowInsecure)
		if err != nil {
			return live.Settings{}, keyError("origins", "%s: %v", o.Name, err)
		}
		s.Origins = append(s.Origins, live.Origin{Name: o.Name, URL: u, DefaultTTL: o.DefaultTTL,
			MaxTries: derefOr(o.MaxTries, c.FillMaxTries), AllowInsecure: o.AllowInsecure,
			ForwardUnsafe: o.ForwardUnsafe, ForwardAuthorization: o.ForwardAuthorization,
			HonorRequestCacheControl: derefOr(o.HonorRequestCacheControl, true)})
	}
	return s, nil
}

// derefOr is *p, or def when p is nil.
func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// cacheBudget is the cache's byte budget: cache_max_bytes on disk,
// amnesia_cache_max_bytes in memory (docs/edge.md §8).
func (c Config) cacheBudget(amnesia bool) int64 {
	if amnesia {
		return int64(c.AmnesiaCacheMaxBytes)
	}
	return int64(c.CacheMaxBytes)
}

// packsDir is the folder packs are discovered in: packs_dir, else
// <data dir>/packs, which may not exist yet (docs/edge.md §4.1), else none
// (""). optional tells which of the two it is.
func (c Config) packsDir(dataDir string) (dir string, optional bool) {
	if c.PacksDir != "" {
		return c.PacksDir, false
	}
	if dataDir == "" {
		return "", false
	}
	return filepath.Join(dataDir, "packs"), true
}

// packOptions are the pack set's options of cfg (docs/edge.md §4); m and the logger are
// added by the role.
func (c Config) packOptions(dataDir string) packs.Options {
	dir, optional := c.packsDir(dataDir)
	return packs.Options{Dir: dir, DirOptional: optional, Files: c.Packs, Verify: c.VerifyPacks, PackErrors: c.PackErrors,
		QuickCheckMaxBytes: int64(c.QuickCheckMaxBytes), DirCacheBytes: int64(c.DirCacheBytes), Poll: c.PackPollInterval}
}
