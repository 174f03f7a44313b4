package edge

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/netcfg"
	"github.com/ronhq/ron/roles/edge/live"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// keyError is a validation error naming "edge.<key>".
func keyError(key, format string, args ...any) error {
	return fmt.Errorf("edge.%s: %s", key, fmt.Sprintf(format, args...))
}

// Validate checks every key on its own. The rule that depends on which
// roles run in the process is CheckSources.
func (c Config) Validate() error {
	for _, check := range []func() error{c.checkURLs, c.checkPositive, c.checkDurations, c.checkPacks,
		c.checkHeaders, c.checkOrigins} {
		if err := check(); err != nil {
			return err
		}
	}
	_, err := c.trustedPrefixes()
	return err
}

// CheckSources applies docs/edge.md §3: storage_url (index_url) must be
// empty while the storage (index) role runs in the same process: one
// source of truth. colocated reports whether a role is enabled here.
func (c Config) CheckSources(colocated func(role string) bool) error {
	for _, s := range []struct{ role, url string }{{storageapi.RoleName, c.StorageURL}, {indexapi.RoleName, c.IndexURL}} {
		if s.url != "" && colocated(s.role) {
			return keyError(s.role+"_url", "must be empty while the %s role runs in this process (one source of truth)", s.role)
		}
	}
	return nil
}

// checkURLs checks the base URLs: http(s), a host, no user info, query or
// fragment.
func (c Config) checkURLs() error {
	for _, u := range []struct{ key, url string }{{"advertise_url", c.AdvertiseURL}, {"storage_url", c.StorageURL},
		{"index_url", c.IndexURL}, {"public_url", c.PublicURL}} {
		if u.url == "" {
			continue
		}
		if err := netcfg.CheckBaseURL(u.url); err != nil {
			return keyError(u.key, "%v", err)
		}
	}
	return nil
}

// checkPositive checks the counts and sizes.
func (c Config) checkPositive() error {
	for _, k := range []struct {
		key string
		v   int64
	}{{"max_providers", int64(c.MaxProviders)}, {"body_max_bytes", int64(c.BodyMaxBytes)},
		{"cache_max_bytes", int64(c.CacheMaxBytes)}, {"amnesia_cache_max_bytes", int64(c.AmnesiaCacheMaxBytes)},
		{"fill_max_bytes", int64(c.FillMaxBytes)}, {"fill_workers", int64(c.FillWorkers)},
		{"fill_queue_cap", int64(c.FillQueueCap)}, {"fill_max_tries", int64(c.FillMaxTries)},
		{"max_variants", int64(c.MaxVariants)}, {"dir_cache_bytes", int64(c.DirCacheBytes)},
		{"tile_max_decoded_bytes", int64(c.TileMaxDecodedBytes)}, {"max_ranges", int64(c.MaxRanges)}} {
		if k.v < 1 {
			return keyError(k.key, "must be positive, got %d", k.v)
		}
	}
	switch {
	case c.MaxProviders > 64:
		return keyError("max_providers", "must be at most 64 (the index's limit), got %d", c.MaxProviders)
	case c.FillMaxTries > 10:
		return keyError("fill_max_tries", "must be at most 10, got %d", c.FillMaxTries)
	case c.QuickCheckMaxBytes < 0:
		return keyError("quick_check_max_bytes", "must not be negative, got %d", c.QuickCheckMaxBytes)
	}
	return nil
}

// maxRequestTimeout is the largest Request-Timeout a client may send (docs/edge.md §2),
// and so the largest request_timeout.
const maxRequestTimeout = time.Hour

// checkDurations: the timeouts and intervals are positive;
// stale_if_unreachable may be 0 (off).
func (c Config) checkDurations() error {
	for _, k := range []struct {
		key string
		v   time.Duration
	}{{"request_timeout", c.RequestTimeout}, {"fill_timeout", c.FillTimeout},
		{"heuristic_max_ttl", c.HeuristicMaxTTL}, {"pack_poll_interval", c.PackPollInterval}} {
		if k.v <= 0 {
			return keyError(k.key, "must be positive, got %s", k.v)
		}
	}
	switch {
	case c.RequestTimeout > maxRequestTimeout:
		return keyError("request_timeout", "must be at most %s, got %s", maxRequestTimeout, c.RequestTimeout)
	case c.StaleIfUnreachable < 0:
		return keyError("stale_if_unreachable", "must not be negative, got %s", c.StaleIfUnreachable)
	}
	return nil
}

// checkPacks checks the pack keys: the enums, and that every listed file
// is a .pmtiles or .mbtiles file whose stem is a valid pack name (the pack
// set's own rule, packs.CheckFile).
func (c Config) checkPacks() error {
	switch {
	case c.VerifyPacks != packs.VerifyBasic && c.VerifyPacks != packs.VerifyFull:
		return keyError("verify_packs", "%q is not basic or full", c.VerifyPacks)
	case c.PackErrors != packs.ErrorsFail && c.PackErrors != packs.ErrorsSkip:
		return keyError("pack_errors", "%q is not fail or skip", c.PackErrors)
	}
	for _, f := range c.Packs {
		if err := packs.CheckFile(f); err != nil {
			return keyError("packs", "%v", err)
		}
	}
	return nil
}

// checkHeaders checks the values sent as headers and cors_origins.
func (c Config) checkHeaders() error {
	if c.TilesCacheControl == "" || strings.ContainsFunc(c.TilesCacheControl, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return keyError("tiles_cache_control", "%q is not a usable header value", c.TilesCacheControl)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return keyError("cors_origins", "%q is neither \"*\" nor an origin like https://app.example", o)
		}
	}
	return nil
}

// checkOrigins checks [[edge.origins]]: names and URLs by the live fill's
// own rules (live.ParseOrigin, docs/edge.md §7.1), unique names, sane options.
func (c Config) checkOrigins() error {
	seen := make(map[string]bool, len(c.Origins))
	for i, o := range c.Origins {
		if _, err := live.ParseOrigin(o.Name, o.URL, o.AllowInsecure); err != nil {
			return keyError("origins", "[%d] %s: %v", i, o.Name, err)
		}
		switch {
		case seen[o.Name]:
			return keyError("origins", "name %q is listed twice", o.Name)
		case o.DefaultTTL < 0:
			return keyError("origins", "%s: default_ttl must not be negative, got %s", o.Name, o.DefaultTTL)
		case o.MaxTries != nil && (*o.MaxTries < 1 || *o.MaxTries > 10):
			return keyError("origins", "%s: max_tries must be within 1–10, got %d", o.Name, *o.MaxTries)
		}
		seen[o.Name] = true
	}
	return nil
}

// trustedPrefixes parses trusted_proxies (a bare address is its /32 or /128).
func (c Config) trustedPrefixes() ([]netip.Prefix, error) {
	out, err := netcfg.Prefixes(c.TrustedProxy)
	if err != nil {
		return nil, keyError("trusted_proxies", "%v", err)
	}
	return out, nil
}
