package node

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime/cluster"
)

// metaPlaceholderID stands in for a node id generated at first start (a
// 26-character ULID) when the metadata size is checked before it exists.
const metaPlaceholderID = "01JD2Z3Y4X5W6V7T8S9R0QPNMK"

// validateCluster checks [cluster] always and, in cluster mode, what the
// node's gossip metadata needs (docs/cluster.md §2, docs/architecture.md §7): every
// enabled role must have a URL others can use, the metadata must fit 512
// bytes, and cluster.registry_admission (the member allow list) needs the
// registry in this process.
func (c *Config) validateCluster() error {
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	if !c.Cluster.Enabled {
		return nil
	}
	for _, e := range enabledEntries(c) {
		if e.Advertise(c) == "" && unspecifiedHost(e.Listen(c)) {
			return fmt.Errorf("%s.advertise_url: needed in cluster mode when %s.listen %q has no specific host",
				e.Name, e.Name, e.Listen(c))
		}
	}
	if c.Cluster.Server && !c.Enabled(indexapi.RoleName) {
		return fmt.Errorf("cluster.server: a server keeps the replicated names, so it must run the index role (add \"index\" to roles)")
	}
	if c.Cluster.RegistryAdmission && !c.Enabled(registryapi.RoleName) {
		return fmt.Errorf("cluster.registry_admission: needs the registry role in this process (admission reads the co-located registry's HEAD)")
	}
	id := c.Cluster.NodeID
	if id == "" {
		id = metaPlaceholderID
	}
	if _, err := cluster.EncodeMeta(nodeMeta(c, id, nil, placeholderRaft(c))); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// roleURL is the base URL a role is reached at (no trailing slash): its
// advertise_url, else http://<bound> when bound is known (a listener on
// port 0), else http://<listen>.
func roleURL(c *Config, e Entry, bound string) string {
	if u := e.Advertise(c); u != "" {
		return strings.TrimRight(u, "/")
	}
	if bound != "" {
		return "http://" + bound
	}
	return "http://" + e.Listen(c)
}

// nodeMeta is this node's gossip metadata: the enabled roles in start
// order, each role's URL, the zone and the control-plane part. bound maps
// roles to their bound listener addresses (nil before they start); raft is
// nil until the control-plane member gossips it.
func nodeMeta(c *Config, id string, bound map[string]string, raft *cluster.RaftMeta) cluster.Meta {
	m := cluster.Meta{V: cluster.MetaVersion, ID: id, Zone: c.Cluster.Zone, URLs: map[string]string{}, Raft: raft}
	for _, e := range enabledEntries(c) {
		m.Roles = append(m.Roles, e.Name)
		m.URLs[e.Name] = roleURL(c, e, bound[e.Name])
	}
	return m
}

// placeholderRaft is the largest control-plane part c's node may gossip,
// for the size check before it exists; nil when the node takes no part.
func placeholderRaft(c *Config) *cluster.RaftMeta {
	if !takesPart(c) {
		return nil
	}
	addr, _ := c.Cluster.RaftAdvertiseAddr()
	if addr == "" {
		addr = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
	}
	return &cluster.RaftMeta{Addr: addr, Server: true, HasState: true}
}

// clusterHotKeys are the [cluster] keys a reload applies live
// (docs/cluster.md §10): zone through UpdateNode, the rest through the
// roles' ApplyCluster. Every other key needs a restart.
var clusterHotKeys = map[string]bool{
	"zone": true, "repair_pace": true, "repair_interval": true, "repair_workers": true,
	"drop_excess": true,
}

// clusterChanges lists the koanf names of the [cluster] keys that differ
// between cur and next, in declaration order.
func clusterChanges(cur, next cluster.Config) []string {
	var out []string
	a, b := reflect.ValueOf(cur), reflect.ValueOf(next)
	for i := range a.NumField() {
		if !sameValue(a.Field(i), b.Field(i)) {
			out = append(out, a.Type().Field(i).Tag.Get("koanf"))
		}
	}
	return out
}

// sameValue compares two config values; a nil and an empty list are equal.
func sameValue(a, b reflect.Value) bool {
	if a.Kind() == reflect.Slice && a.Len() == 0 && b.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// clusterRestartOnly lists the changed [cluster] keys a reload cannot
// apply.
func clusterRestartOnly(cur, next cluster.Config) []string {
	var keys []string
	for _, k := range clusterChanges(cur, next) {
		if !clusterHotKeys[k] {
			keys = append(keys, "cluster."+k)
		}
	}
	return keys
}
