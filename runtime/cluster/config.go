package cluster

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/ronhq/ron/runtime/config"
)

// Config is the [cluster] section (docs/cluster.md §10). The storage role
// reads the repair_* keys, the index role the index_* keys.
type Config struct {
	Enabled             bool          `koanf:"enabled" help:"cluster mode: gossip membership, replicated writes, repair, index ownership"`
	NodeID              string        `koanf:"node_id" help:"unique node id ([A-Za-z0-9._-]{1,64}); generated and stored in <data>/node.id when empty"`
	Listen              string        `koanf:"listen" help:"gossip address (TCP and UDP)"`
	Advertise           string        `koanf:"advertise" help:"gossip address others use; required when listen's host is unspecified"`
	Join                []string      `koanf:"join" help:"seed host:port list; retried with backoff until one answers"`
	Zone                string        `koanf:"zone" help:"failure domain for placement and reader preference"`
	Profile             string        `koanf:"profile" help:"memberlist timings: lan or local (loopback tests)"`
	RootKeyFile         string        `koanf:"root_key_file" help:"shared root key file (default <data>/keys/root.key)"`
	RegistryAdmission   bool          `koanf:"registry_admission" help:"only nodes listed as node items in the registry HEAD take part"`
	RepairAfter         time.Duration `koanf:"repair_after" help:"absence before a member's objects are re-replicated (≥ 10s)"`
	ForgetAfter         time.Duration `koanf:"forget_after" help:"how long departed members are remembered"`
	RepairInterval      time.Duration `koanf:"repair_interval" help:"pause between repair passes"`
	RepairBatch         int           `koanf:"repair_batch" help:"ids per inventory batch of a repair pass"`
	RepairScanRate      int           `koanf:"repair_scan_rate" help:"ids scanned per second at most"`
	RepairWorkers       int           `koanf:"repair_workers" help:"repair transfer workers"`
	RepairPerTarget     int           `koanf:"repair_per_target" help:"concurrent repair transfers to one target"`
	RepairPace          config.Size   `koanf:"repair_pace" help:"repair bytes per second per node"`
	RepairQueue         int           `koanf:"repair_queue" help:"capacity of each repair lane"`
	DropExcess          bool          `koanf:"drop_excess" help:"delete confirmed excess copies"`
	ReplicaStallTimeout time.Duration `koanf:"replica_stall_timeout" help:"synchronous copy: no progress for this long → next target"`
	IndexReplicas       int           `koanf:"index_replicas" help:"index owners per key"`
	Server              bool          `koanf:"server" help:"a voter of the control plane (names, registry): give 3 or 5 nodes server = true"`
	BootstrapExpect     int           `koanf:"bootstrap_expect" help:"servers that start the control plane together once gossip shows them all (0: wait to be added)"`
	RaftListen          string        `koanf:"raft_listen" help:"control-plane (Raft) address; default: cluster.listen's host, its port + 1"`
	RaftAdvertise       string        `koanf:"raft_advertise" help:"Raft address others use; default: cluster.advertise's host, raft_listen's port"`
	ServerRemoveAfter   time.Duration `koanf:"server_remove_after" help:"absence before the leader removes a control-plane member (≥ 10s)"`
}

// Profiles are the memberlist timing presets.
const (
	ProfileLAN   = "lan"
	ProfileLocal = "local"
)

// DefaultConfig returns the spec's defaults (cluster mode off).
func DefaultConfig() Config {
	return Config{
		Listen:              "127.0.0.1:7946",
		Join:                []string{},
		Profile:             ProfileLAN,
		RepairAfter:         5 * time.Minute,
		ForgetAfter:         24 * time.Hour,
		RepairInterval:      60 * time.Second,
		RepairBatch:         1000,
		RepairScanRate:      10000,
		RepairWorkers:       4,
		RepairPerTarget:     2,
		RepairPace:          50 << 20,
		RepairQueue:         256,
		DropExcess:          true,
		ReplicaStallTimeout: 5 * time.Second,
		IndexReplicas:       3,
		ServerRemoveAfter:   10 * time.Minute,
	}
}

var (
	nodeIDSyntax = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	zoneSyntax   = regexp.MustCompile(`^[A-Za-z0-9._-]{0,64}$`)
)

// ValidNodeID reports whether id has the node id syntax.
func ValidNodeID(id string) bool { return nodeIDSyntax.MatchString(id) }

// ValidZone reports whether z has the zone syntax (empty allowed).
func ValidZone(z string) bool { return zoneSyntax.MatchString(z) }

// Validate checks every key, also when cluster mode is off (a config file
// stays valid when the mode is switched on).
func (c Config) Validate() error {
	checks := []func() error{c.checkIdentity, c.checkAddrs, c.checkRepair, c.checkIndex, c.checkRaft}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func keyErr(key, format string, args ...any) error {
	return fmt.Errorf("cluster.%s: %s", key, fmt.Sprintf(format, args...))
}

func (c Config) checkIdentity() error {
	if c.NodeID != "" && !ValidNodeID(c.NodeID) {
		return keyErr("node_id", "%q must match [A-Za-z0-9._-]{1,64}", c.NodeID)
	}
	if !ValidZone(c.Zone) {
		return keyErr("zone", "%q must match [A-Za-z0-9._-]{0,64}", c.Zone)
	}
	if c.Profile != ProfileLAN && c.Profile != ProfileLocal {
		return keyErr("profile", "%q must be lan or local", c.Profile)
	}
	return nil
}

func (c Config) checkAddrs() error {
	host, err := checkHostPort("listen", c.Listen)
	if err != nil {
		return err
	}
	if c.Advertise != "" {
		ahost, err := checkHostPort("advertise", c.Advertise)
		if err != nil {
			return err
		}
		if ip := net.ParseIP(ahost); ip == nil || ip.IsUnspecified() {
			return keyErr("advertise", "%q must be an IP address others can reach", c.Advertise)
		}
	} else if ip := net.ParseIP(host); c.Enabled && (host == "" || (ip != nil && ip.IsUnspecified())) {
		return keyErr("advertise", "required when cluster.listen (%q) has an unspecified host", c.Listen)
	}
	for _, j := range c.Join {
		if _, err := checkHostPort("join", j); err != nil {
			return err
		}
	}
	return nil
}

// checkHostPort validates a host:port with a numeric port and returns the host.
func checkHostPort(key, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", keyErr(key, "%q is not host:port: %v", addr, err)
	}
	if p, err := net.LookupPort("tcp", port); err != nil || p <= 0 {
		return "", keyErr(key, "%q has an invalid port", addr)
	}
	return host, nil
}

func (c Config) checkRepair() error {
	switch {
	case c.RepairAfter < 10*time.Second:
		return keyErr("repair_after", "%s is below 10s", c.RepairAfter)
	case c.ForgetAfter < c.RepairAfter:
		return keyErr("forget_after", "%s is below repair_after (%s)", c.ForgetAfter, c.RepairAfter)
	case c.RepairInterval <= 0:
		return keyErr("repair_interval", "must be positive")
	case c.RepairBatch < 1 || c.RepairBatch > 1000:
		return keyErr("repair_batch", "%d is outside 1–1000 (the /inventory/has limit)", c.RepairBatch)
	case c.RepairScanRate < 1:
		return keyErr("repair_scan_rate", "must be positive")
	case c.RepairWorkers < 1 || c.RepairWorkers > 64:
		return keyErr("repair_workers", "%d is outside 1–64", c.RepairWorkers)
	case c.RepairPerTarget < 1:
		return keyErr("repair_per_target", "must be positive")
	case c.RepairPace <= 0:
		return keyErr("repair_pace", "must be positive")
	case c.RepairQueue < 1 || c.RepairQueue > 1<<16:
		return keyErr("repair_queue", "%d is outside 1–65536", c.RepairQueue)
	case c.ReplicaStallTimeout <= 0:
		return keyErr("replica_stall_timeout", "must be positive")
	}
	return nil
}

func (c Config) checkIndex() error {
	switch {
	case c.IndexReplicas < 1 || c.IndexReplicas > 7:
		return keyErr("index_replicas", "%d is outside 1–7", c.IndexReplicas)
	}
	return nil
}

// NodeScopes are the scopes of node-to-node tokens (docs/cluster.md §2), in
// one caveat: writes, inventory and the node-only replicate scopes, plus
// reads when reads are private.
func NodeScopes(privateReads bool) []string {
	s := []string{"storage:write", "storage:read_inventory", "index:write", "storage:replicate", "index:replicate"}
	if privateReads {
		s = append(s, "storage:read", "index:read")
	}
	return s
}

// checkRaft checks the control-plane keys (docs/cluster.md §14).
func (c Config) checkRaft() error {
	switch {
	case c.BootstrapExpect < 0 || c.BootstrapExpect > 7:
		return keyErr("bootstrap_expect", "%d is outside 0–7", c.BootstrapExpect)
	case c.BootstrapExpect > 0 && !c.Server:
		return keyErr("bootstrap_expect", "only a server bootstraps the control plane: set cluster.server = true")
	case c.ServerRemoveAfter < 10*time.Second:
		return keyErr("server_remove_after", "%s is below 10s", c.ServerRemoveAfter)
	}
	bind, err := c.RaftBind()
	if err != nil {
		return err
	}
	adv, err := c.RaftAdvertiseAddr()
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(bind)
	if ip := net.ParseIP(host); adv == "" && c.Enabled && (host == "" || (ip != nil && ip.IsUnspecified())) {
		return keyErr("raft_advertise", "required when the Raft listener (%q) has an unspecified host", bind)
	}
	return nil
}

// RaftBind is the Raft listener's address: raft_listen (port 0: any free
// port, gossiped once bound), else cluster.listen's host with its port + 1.
func (c Config) RaftBind() (string, error) {
	if c.RaftListen != "" {
		if _, port, err := net.SplitHostPort(c.RaftListen); err == nil && port == "0" {
			return c.RaftListen, nil
		}
		_, err := checkHostPort("raft_listen", c.RaftListen)
		return c.RaftListen, err
	}
	return nextPort("listen", c.Listen)
}

// RaftAdvertiseAddr is the Raft address others dial: raft_advertise, else
// cluster.advertise's host with the Raft listener's port, else "" (the
// bound address).
func (c Config) RaftAdvertiseAddr() (string, error) {
	if c.RaftAdvertise != "" {
		host, err := checkHostPort("raft_advertise", c.RaftAdvertise)
		if ip := net.ParseIP(host); err == nil && (ip == nil || ip.IsUnspecified()) {
			return "", keyErr("raft_advertise", "%q must be an IP address others can reach", c.RaftAdvertise)
		}
		return c.RaftAdvertise, err
	}
	if c.Advertise == "" {
		return "", nil
	}
	bind, err := c.RaftBind()
	if err != nil {
		return "", err
	}
	_, port, _ := net.SplitHostPort(bind)
	host, _, _ := net.SplitHostPort(c.Advertise)
	if port == "0" {
		return "", nil
	}
	return net.JoinHostPort(host, port), nil
}

// nextPort is addr (the value of key) with its port + 1; port 0 stays 0.
func nextPort(key, addr string) (string, error) {
	host, err := checkHostPort(key, addr)
	if err != nil {
		return "", err
	}
	_, port, _ := net.SplitHostPort(addr)
	p, _ := net.LookupPort("tcp", port)
	if p >= 65535 {
		return "", keyErr("raft_listen", "needed: cluster.listen's port %d has no next port", p)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}
