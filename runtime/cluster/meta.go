package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// MetaVersion is the only metadata version this build reads and writes.
const MetaVersion = 1

// MaxMetaSize is memberlist's NodeMeta limit (docs/cluster.md §2).
const MaxMetaSize = 512

// Meta is a node's gossip metadata (memberlist NodeMeta, docs/cluster.md
// §2): its id, enabled roles, each role's advertised base URL, its zone
// and, on a member of the control-plane group, its Raft part.
type Meta struct {
	V     int               `json:"v"`
	ID    string            `json:"id"`
	Roles []string          `json:"roles"`
	URLs  map[string]string `json:"urls"`
	Zone  string            `json:"zone"`
	Raft  *RaftMeta         `json:"raft,omitempty"`
}

// RaftMeta is a control-plane member's part of its metadata
// (docs/cluster.md §14): the address of its Raft transport, whether it is
// a server (a voter) and whether it holds Raft state (the bootstrap rule
// counts only servers without).
type RaftMeta struct {
	Addr     string `json:"addr"`
	Server   bool   `json:"server,omitempty"`
	HasState bool   `json:"state,omitempty"`
}

// errMetaVersion marks metadata of a version this build does not read.
var errMetaVersion = errors.New("unknown metadata version")

// EncodeMeta returns m as compact JSON. A zero V means MetaVersion. It fails
// when V is another version, the id or zone has a bad syntax, a role is
// empty, or the encoding exceeds MaxMetaSize bytes (ron config check uses
// it to refuse such configs).
func EncodeMeta(m Meta) ([]byte, error) {
	if m.V == 0 {
		m.V = MetaVersion
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	b, err := encodeWire(wireMeta{Meta: m})
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMetaSize {
		return nil, fmt.Errorf("cluster metadata is %d bytes, above the %d-byte gossip limit (fewer roles or shorter URLs)", len(b), MaxMetaSize)
	}
	return b, nil
}

// wireMeta is the gossip encoding: Meta plus "leaving":true in the last
// update a node sends before it leaves. memberlist v0.7.0 never fills
// Node.State, so this announcement is how others tell left from dead.
// Version-1 readers ignore the field.
type wireMeta struct {
	Meta
	Leaving bool `json:"leaving,omitempty"`
}

// encodeWire returns w as compact JSON (no HTML escaping; roles and urls
// never null).
func encodeWire(w wireMeta) ([]byte, error) {
	if w.Roles == nil {
		w.Roles = []string{}
	}
	if w.URLs == nil {
		w.URLs = map[string]string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("cluster metadata: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// check validates the fields of m.
func (m Meta) check() error {
	switch {
	case m.V != MetaVersion:
		return fmt.Errorf("cluster metadata: %w %d (want %d)", errMetaVersion, m.V, MetaVersion)
	case !ValidNodeID(m.ID):
		return fmt.Errorf("cluster metadata: node id %q must match [A-Za-z0-9._-]{1,64}", m.ID)
	case !ValidZone(m.Zone):
		return fmt.Errorf("cluster metadata: zone %q must match [A-Za-z0-9._-]{0,64}", m.Zone)
	case slices.Contains(m.Roles, ""):
		return errors.New("cluster metadata: empty role name")
	case m.Raft != nil && m.Raft.Addr == "":
		return errors.New("cluster metadata: raft part without an address")
	}
	return nil
}

// decodeMeta parses gossip metadata and its leaving announcement; it fails
// on bad JSON, an unknown version or bad fields. Unknown JSON fields are
// ignored (additions within version 1 stay readable).
func decodeMeta(b []byte) (Meta, bool, error) {
	var w wireMeta
	if err := json.Unmarshal(b, &w); err != nil {
		return Meta{}, false, fmt.Errorf("cluster metadata: %w", err)
	}
	if err := w.check(); err != nil {
		return Meta{}, false, err
	}
	return w.Meta, w.Leaving, nil
}

// member builds the View entry for m in state since the given time; URLs
// lose trailing slashes.
func (m Meta) member(state State, since time.Time) Member {
	urls := make(map[string]string, len(m.URLs))
	for role, u := range m.URLs {
		urls[role] = strings.TrimRight(u, "/")
	}
	mb := Member{ID: m.ID, Roles: slices.Clone(m.Roles), URLs: urls, Zone: m.Zone, State: state, Since: since}
	if m.Raft != nil {
		mb.Raft = *m.Raft
	}
	return mb
}

// clone returns a deep copy of m.
func (m Meta) clone() Meta {
	m.Roles = slices.Clone(m.Roles)
	m.URLs = maps.Clone(m.URLs)
	if m.Raft != nil {
		r := *m.Raft
		m.Raft = &r
	}
	return m
}
