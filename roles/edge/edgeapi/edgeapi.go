// Package edgeapi is the edge role's contract (docs/edge.md §1): its name,
// the scope a gateway needs to forward to it, and the wire types of its JSON
// answers. It imports only httpx, store and runtime; any package may import
// it, and no package outside roles/edge imports anything else of the edge.
package edgeapi

import "net/http"

// RoleName is the edge role's name: in config (roles = […]), metrics,
// cluster metadata and logs.
const RoleName = "edge"

// ScopeRead is the scope of the gateway's /edge routes (docs/gateway.md §1).
const ScopeRead = "edge:read"

// PackList is the body of GET /packs (docs/edge.md §4.6): the mounted packs
// sorted by name.
type PackList struct {
	Packs []Pack `json:"packs"`
}

// Pack is one element of the /packs listing, fields in the spec's order.
// ETag is the pack's ETag as sent in headers, quotes included; Archive is
// the path of the PMTiles archive, null for MBTiles packs.
type Pack struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	Bytes    int64   `json:"bytes"`
	ETag     string  `json:"etag"`
	TileType string  `json:"tile_type"`
	MinZoom  int     `json:"minzoom"`
	MaxZoom  int     `json:"maxzoom"`
	TileJSON string  `json:"tilejson"`
	Archive  *string `json:"archive"`
}

// Local is the edge role as the roles of its own process see it.
type Local interface {
	// Handler is the edge's HTTP handler (its routes behind the shared
	// middleware chain), for a co-located gateway; nil before Start.
	Handler() http.Handler
}
