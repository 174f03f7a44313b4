package descriptor

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
)

// nodeRoles are the role names a node item may list.
var nodeRoles = []string{"storage", "index", "registry", "gateway", "edge"}

// nodeRule checks roles (a non-empty set of nodeRoles), urls (keys ⊆ roles,
// values absolute http(s) URLs of at most MaxURLBytes) and zone.
func nodeRule(l loc, f members) (Node, error) {
	n := Node{ID: f.str("id"), Zone: f.str("zone"), URLs: map[string]string{}}
	if err := json.Unmarshal(f["roles"], &n.Roles); err != nil || len(n.Roles) == 0 {
		return Node{}, badRequest(l.in("roles"), ReasonInvalidValue, "roles must be a non-empty set")
	}
	for i, r := range n.Roles {
		if !slices.Contains(nodeRoles, r) {
			return Node{}, badRequest(l.in("roles"), ReasonInvalidValue, "role %q is not one of %v", clip(r), nodeRoles)
		}
		if slices.Contains(n.Roles[:i], r) {
			return Node{}, badRequest(l.in("roles"), ReasonInvalidValue, "role %q repeats", r)
		}
	}
	if raw, ok := f["urls"]; ok {
		_ = json.Unmarshal(raw, &n.URLs)
	}
	for _, role := range slices.Sorted(maps.Keys(n.URLs)) {
		if err := checkNodeURL(l.in("urls").in(role), role, n.URLs[role], n.Roles); err != nil {
			return Node{}, err
		}
	}
	if !zoneRe.MatchString(n.Zone) {
		return Node{}, badRequest(l.in("zone"), ReasonInvalidValue, "zone %q is not 0–64 of [A-Za-z0-9._-]", clip(n.Zone))
	}
	return n, nil
}

// checkNodeURL requires role ∈ roles and u an absolute http(s) URL with a
// host, no user info and at most MaxURLBytes bytes.
func checkNodeURL(l loc, role, u string, roles []string) error {
	if !slices.Contains(roles, role) {
		return badRequest(l, ReasonInvalidValue, "url for role %q, which the node does not list", clip(role))
	}
	if len(u) > MaxURLBytes {
		return badRequest(l, ReasonInvalidValue, "url of %d bytes exceeds %d", len(u), MaxURLBytes)
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return badRequest(l, ReasonInvalidValue, "%q is not an absolute http(s) URL with a host and no user info", clip(u))
	}
	return nil
}
