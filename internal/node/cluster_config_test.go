package node

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/config"
)

// loadTOML loads a config file holding toml over the defaults.
func loadTOML(t *testing.T, toml string) (*Config, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ron.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(config.Sources{File: file})
}

// TestClusterConfigValidation: [cluster] keys are checked in every mode;
// in cluster mode every enabled role needs a URL others can use, the
// metadata must fit 512 bytes and registry admission needs the registry.
func TestClusterConfigValidation(t *testing.T) {
	const on = "[cluster]\nenabled = true\n"
	longURL := "http://" + strings.Repeat("a", 200) + ".example:1"
	cases := []struct {
		name string
		toml string
		want string // "" = valid
	}{
		{"defaults", "", ""},
		{"cluster on, loopback listeners", on, ""},
		{"bad node id", "[cluster]\nnode_id = \"a b\"\n", "cluster.node_id"},
		{"bad zone", "[cluster]\nzone = \"eu/1\"\n", "cluster.zone"},
		{"bad profile", "[cluster]\nprofile = \"wan\"\n", "cluster.profile"},
		{"repair_after below 10s", "[cluster]\nrepair_after = \"5s\"\n", "cluster.repair_after"},
		{"zero pace", "[cluster]\nrepair_pace = \"0\"\n", "cluster.repair_pace"},
		{"unknown cluster key", "[cluster]\nnodes = 3\n", "nodes"},
		{"bad join", "[cluster]\njoin = [\"nohost\"]\n", "cluster.join"},
		{"gossip on 0.0.0.0 without advertise", on + "listen = \"0.0.0.0:7946\"\n", "cluster.advertise"},
		{"gossip on 0.0.0.0 with advertise", on + "listen = \"0.0.0.0:7946\"\nadvertise = \"10.0.0.1:7946\"\n", ""},
		{"storage on 0.0.0.0 without advertise_url", on + "[storage]\nlisten = \"0.0.0.0:5303\"\n", "storage.advertise_url"},
		{"registry on :: without advertise_url", on + "[registry]\nlisten = \"[::]:9444\"\n", "registry.advertise_url"},
		{"edge on an empty host", on + "[edge]\nlisten = \":8081\"\n", "edge.advertise_url"},
		{"gateway on 0.0.0.0 with advertise_url", on + "[gateway]\nlisten = \"0.0.0.0:8090\"\nadvertise_url = \"http://10.0.0.1:8090\"\n", ""},
		{"disabled role on 0.0.0.0", "roles = [\"registry\", \"index\", \"storage\"]\n" + on + "[edge]\nlisten = \"0.0.0.0:8081\"\n", ""},
		{"cluster off, gateway on 0.0.0.0", "[gateway]\nlisten = \"0.0.0.0:8090\"\n", ""},
		{"metadata above 512 bytes", on + "[storage]\nadvertise_url = \"" + longURL + "\"\n[index]\nadvertise_url = \"" + longURL + "\"\n" +
			"[registry]\nadvertise_url = \"" + longURL + "\"\n", "512"},
		{"registry admission without the registry", "roles = [\"index\", \"storage\"]\n" + on + "registry_admission = true\n", "cluster.registry_admission"},
		{"registry admission with the registry", on + "registry_admission = true\n", ""},
		{"gateway alone in a cluster: members serve it", "roles = [\"gateway\"]\n" + on, ""},
		{"gateway alone, cluster off", "roles = [\"gateway\"]\n", "gateway"},
		{"gateway URL for a co-located role in a cluster", "roles = [\"storage\", \"gateway\"]\n" + on + "[gateway]\nstorage_url = \"http://10.0.0.1:5303\"\n", "storage_url"},
		{"registry admission, cluster off", "roles = [\"storage\"]\n[cluster]\nregistry_admission = true\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadTOML(t, c.toml)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid config refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

// TestNodeMeta: the metadata lists the enabled roles in start order with
// advertise_url, else the bound address, else http://<listen>.
func TestNodeMeta(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Roles = []string{"gateway", "storage", "index"}
	cfg.Cluster.Zone = "eu-1"
	cfg.Storage.AdvertiseURL = "http://10.0.0.1:5303/"
	cfg.Index.Listen = "127.0.0.1:0"
	m := nodeMeta(&cfg, "node-a", map[string]string{"index": "127.0.0.1:41234"}, nil)
	if m.V != 1 || m.ID != "node-a" || m.Zone != "eu-1" || !slices.Equal(m.Roles, []string{"index", "storage", "gateway"}) {
		t.Fatalf("meta %+v", m)
	}
	want := map[string]string{"storage": "http://10.0.0.1:5303", "index": "http://127.0.0.1:41234", "gateway": "http://127.0.0.1:8090"}
	for role, u := range want {
		if m.URLs[role] != u {
			t.Errorf("url of %s = %q, want %q", role, m.URLs[role], u)
		}
	}
	if raw, err := cluster.EncodeMeta(m); err != nil || len(raw) > cluster.MaxMetaSize {
		t.Fatalf("encode: %d bytes, %v", len(raw), err)
	}
}

// TestClusterRestartOnly: the hot [cluster] keys pass, every other change
// is named.
func TestClusterRestartOnly(t *testing.T) {
	base := cluster.DefaultConfig()
	cases := []struct {
		name   string
		mutate func(*cluster.Config)
		want   []string
	}{
		{"nothing", func(*cluster.Config) {}, nil},
		{"hot keys", func(c *cluster.Config) {
			c.Zone, c.RepairPace, c.RepairInterval, c.RepairWorkers, c.DropExcess = "eu-2", 1<<20, time.Second, 8, false
		}, nil},
		{"listen and node id", func(c *cluster.Config) { c.Listen, c.NodeID = "127.0.0.1:7947", "n" },
			[]string{"cluster.node_id", "cluster.listen"}},
		{"enabled", func(c *cluster.Config) { c.Enabled = true }, []string{"cluster.enabled"}},
		{"join, root key, admission", func(c *cluster.Config) {
			c.Join, c.RootKeyFile, c.RegistryAdmission = []string{"10.0.0.2:7946"}, "/k", true
		}, []string{"cluster.join", "cluster.root_key_file", "cluster.registry_admission"}},
		{"repair_after, queue, stall", func(c *cluster.Config) {
			c.RepairAfter, c.RepairQueue, c.ReplicaStallTimeout = time.Hour, 8, time.Second
		}, []string{"cluster.repair_after", "cluster.repair_queue", "cluster.replica_stall_timeout"}},
		{"server, bootstrap_expect, raft addresses", func(c *cluster.Config) {
			c.Server, c.BootstrapExpect, c.RaftListen, c.RaftAdvertise = true, 3, "127.0.0.1:8300", "10.0.0.1:8300"
		}, []string{"cluster.server", "cluster.bootstrap_expect", "cluster.raft_listen", "cluster.raft_advertise"}},
		{"repair_pace", func(c *cluster.Config) { c.RepairPace = 1 << 20 }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := base
			next.Join = slices.Clone(base.Join)
			c.mutate(&next)
			if got := clusterRestartOnly(base, next); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}
