package sites

import (
	"context"
	"maps"
	"mime"
	"net/http"
	"slices"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// site is a decoded manifest with its path tree, or (bad set) the 502 of
// a manifest that manifest.Parse refused: ids are immutable, so refusals
// are cached too. Immutable once cached.
type site struct {
	id      store.ID
	entries map[string]manifest.Entry
	tree    *Tree
	weight  int64
	bad     error
}

// rejectedWeight is the LRU weight of a cached refusal.
const rejectedWeight = 256

// entryOverhead estimates the decoded cost of one entry beyond its encoded
// bytes (map slot, Entry struct, string headers, the tree's slice slot).
const entryOverhead = 128

// manifestWeight is the LRU weight of a manifest: its encoded size plus
// entryOverhead per entry, a bound on the decoded memory it holds.
func manifestWeight(raw []byte, entries int) int64 {
	return int64(len(raw)) + int64(entries)*entryOverhead
}

// target returns the decoded site of a manifest target, or nil for a blob.
// A target in the manifest cache needs no Objects call.
func (s *Sites) target(ctx context.Context, id store.ID) (*site, error) {
	if st, ok := s.manifests.Get(id); ok {
		return st.orBad()
	}
	ct, err := s.objects.Head(ctx, id)
	if err != nil {
		return nil, upstreamError(err)
	}
	if !IsManifestType(ct) {
		return nil, nil
	}
	return s.siteFlight.do(ctx, id.String(), func() (*site, error) {
		if st, ok := s.manifests.Get(id); ok {
			return st.orBad()
		}
		return s.loadManifest(ctx, id)
	})
}

// orBad returns st, or its cached refusal.
func (st *site) orBad() (*site, error) {
	if st.bad != nil {
		return nil, cloneError(st.bad)
	}
	return st, nil
}

// IsManifestType reports whether the Content-Type value ct has the media
// type manifest.MediaType (case-insensitive, parameters ignored). A value
// that does not parse is not a manifest.
func IsManifestType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == manifest.MediaType
}

// loadManifest reads, checks, decodes and caches the manifest id.
func (s *Sites) loadManifest(ctx context.Context, id store.ID) (*site, error) {
	max := s.settings().manifestMax
	raw, err := s.objects.ReadAll(ctx, id, max)
	switch {
	case isTooLarge(err) || (err == nil && int64(len(raw)) > max):
		return nil, s.rejectManifest(id, "manifest exceeds %d bytes", max)
	case err != nil:
		return nil, upstreamError(err)
	case store.Sum(raw) != id:
		return nil, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable,
			"manifest bytes do not match its id").WithDetails(map[string]any{"reason": "hash_mismatch"})
	}
	st, err := decodeSite(id, raw)
	if err != nil {
		bad := s.rejectManifest(id, "%v", err)
		s.manifests.Add(id, &site{id: id, bad: bad, weight: rejectedWeight}, rejectedWeight)
		return nil, bad
	}
	s.manifests.Add(id, st, st.weight)
	return st, nil
}

// decodeSite parses raw strictly (manifest.Parse) into a site.
func decodeSite(id store.ID, raw []byte) (*site, error) {
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &site{
		id:      id,
		entries: m.Entries,
		tree:    NewTree(slices.Collect(maps.Keys(m.Entries))),
		weight:  manifestWeight(raw, len(m.Entries)),
	}, nil
}

// rejectManifest counts and logs a refused manifest and returns its 502
// malformed (details.reason "manifest").
func (s *Sites) rejectManifest(id store.ID, format string, args ...any) error {
	s.metrics.rejected.Inc()
	e := httpx.NewError(http.StatusBadGateway, httpx.CodeMalformed, format, args...)
	s.log.Warn().Str("manifest", id.Prefix()).Str("reason", e.Message).Msg("site manifest rejected")
	return e.WithDetails(map[string]any{"reason": "manifest"})
}
