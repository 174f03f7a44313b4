package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Limits of the index tests (docs/index.md §5, §6; docs/storage.md §5).
const (
	// announceLimit bounds the wait for an object stored on a node to show
	// up in that node's index: a 250 ms gather, a 1 s send deadline and up
	// to three retries fit many times over.
	announceLimit = 10 * time.Second
	// resolveBudget is the index's whole-lookup budget (deadline_ms).
	resolveBudget = 1200 * time.Millisecond
	// resolveSlack covers scheduling and loopback HTTP on a loaded 2-core
	// CI machine on top of resolveBudget.
	resolveSlack = 500 * time.Millisecond
	// breakerCooldown is the per-peer breaker's open time (breaker_cooldown).
	breakerCooldown = 10 * time.Second
	// breakerCloseLimit bounds the wait for a breaker to close again after
	// the peer is back: the cooldown, then three half-open probes.
	breakerCloseLimit = 30 * time.Second
)

// startCluster starts count nodes with the default roles (index+storage),
// each listing the other nodes' index URLs in --index.peers; node 0 lists its
// own URL too, which it must recognise and skip (docs/index.md §6). Every
// port is reserved before the first launch, so the lists are complete; all
// nodes launch before any is waited on.
func startCluster(t *testing.T, count int) []*node {
	t.Helper()
	ports := make([]nodePorts, count)
	for i := range ports {
		ports[i] = freePorts(t)
	}
	nodes := make([]*node, count)
	for i := range nodes {
		var peers []string
		for j, p := range ports {
			if j != i || i == 0 {
				peers = append(peers, "http://"+p.index)
			}
		}
		o := nodeOpts{dataDir: t.TempDir(), ports: ports[i], args: []string{"--index.peers", strings.Join(peers, ",")}}
		nodes[i] = launch(t, o)
	}
	for _, n := range nodes {
		if err := n.waitReady(false); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

// indexURL is the base URL of n's index listener.
func (n *node) indexURL() string { return "http://" + n.index }

// nodeID is the storage node id announced by n (<data>/node.id).
func (n *node) nodeID() string {
	n.t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dataDir, "node.id"))
	if err != nil {
		n.t.Fatalf("%s: node id: %v", n.name, err)
	}
	return strings.TrimSpace(string(b))
}

// provider is one provider record (docs/index.md §4).
type provider struct {
	Node       string `json:"node"`
	Addr       string `json:"addr"`
	Region     string `json:"region"`
	Type       string `json:"type"`
	LastSeenS  int64  `json:"last_seen_s"`
	ExpiresInS int64  `json:"expires_in_s"`
}

// resolveAnswer is a GET /resolve/{key} answer (docs/index.md §5).
type resolveAnswer struct {
	Key         string     `json:"key"`
	Target      string     `json:"target"`
	Kind        string     `json:"kind"`
	NameVersion int64      `json:"name_version"`
	Providers   []provider `json:"providers"`
	Source      string     `json:"source"`
	Partial     bool       `json:"partial"`
}

// resolveCLI runs `ron resolve KEY -o json` against n's index with extra
// flags. A zero exit's stdout is decoded into the answer.
func (n *node) resolveCLI(key string, extra ...string) (resolveAnswer, cliResult) {
	n.t.Helper()
	args := append([]string{"resolve", key, "--server", n.indexURL(), "-o", "json"}, extra...)
	res := ron(n.t, cliOpts{}, args...)
	var a resolveAnswer
	if res.code == 0 {
		if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
			n.t.Fatalf("ron resolve %s -o json printed %q: %v", key, res.stdout, err)
		}
	}
	return a, res
}

// mustResolve is resolveCLI that fails the test unless the exit code is 0.
func (n *node) mustResolve(key string, extra ...string) resolveAnswer {
	n.t.Helper()
	a, res := n.resolveCLI(key, extra...)
	if res.code != 0 {
		n.t.Fatalf("ron resolve %s on %s: exit %d\nstdout: %s\nstderr: %s", key, n.name, res.code, res.stdout, res.stderr)
	}
	return a
}

// resolveHTTP sends GET /resolve/{key} to n's index, bypassing its caches,
// and returns the answer and how long it took.
func (n *node) resolveHTTP(key string) (httpResult, time.Duration) {
	n.t.Helper()
	start := time.Now()
	r := do(n.t, http.MethodGet, n.indexURL()+"/resolve/"+key, hdr("Cache-Control", "no-cache"), nil)
	return r, time.Since(start)
}

// localProviders asks n's index for id's providers from its own store only
// (?local=1, never peers or caches); nil on 404.
func (n *node) localProviders(id string) []provider {
	n.t.Helper()
	r := do(n.t, http.MethodGet, n.indexURL()+"/providers/"+id+"?local=1", nil, nil)
	if r.status == http.StatusNotFound {
		return nil
	}
	if r.status != http.StatusOK {
		n.t.Fatalf("GET /providers/%s?local=1 on %s: %d %s", id, n.name, r.status, r.body)
	}
	var out struct {
		B3        string     `json:"b3"`
		Providers []provider `json:"providers"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.B3 != id {
		n.t.Fatalf("GET /providers/%s?local=1 on %s: %s (%v)", id, n.name, r.body, err)
	}
	return out.Providers
}

// waitAnnounced polls n's own index until n's storage is a provider of id
// (the storage role announced it, docs/storage.md §5).
func (n *node) waitAnnounced(id string) provider {
	n.t.Helper()
	var got provider
	poll(n.t, announceLimit, fmt.Sprintf("%s's storage to announce %s to its index", n.name, id), func() bool {
		for _, p := range n.localProviders(id) {
			if p.Addr == "http://"+n.storage {
				got = p
				return true
			}
		}
		return false
	})
	return got
}

// nameCLI runs `ron name ARGS… --server <n's index>` with n's root key.
func (n *node) nameCLI(args ...string) cliResult {
	n.t.Helper()
	args = append(append([]string{"name"}, args...), "--server", n.indexURL())
	return ron(n.t, cliOpts{env: n.cliEnv()}, args...)
}

// nameRecord is a name pointer (docs/index.md §3).
type nameRecord struct {
	Name      string `json:"name"`
	B3        string `json:"b3"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// mustName runs a `ron name` subcommand with -o json that must succeed and
// decodes its record.
func (n *node) mustName(args ...string) nameRecord {
	n.t.Helper()
	res := n.nameCLI(append(args, "-o", "json")...)
	if res.code != 0 {
		n.t.Fatalf("ron name %s on %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), n.name, res.code, res.stdout, res.stderr)
	}
	var rec nameRecord
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		n.t.Fatalf("ron name %s -o json printed %q: %v", strings.Join(args, " "), res.stdout, err)
	}
	return rec
}

// historyEntry is one version of a name (GET /names/{name}/versions).
type historyEntry struct {
	Version   int64   `json:"version"`
	B3        *string `json:"b3"`
	Deleted   bool    `json:"deleted"`
	UpdatedAt string  `json:"updated_at"`
}

// history runs `ron name history NAME -o json` on n.
func (n *node) history(name string) []historyEntry {
	n.t.Helper()
	res := n.nameCLI("history", name, "-o", "json")
	if res.code != 0 {
		n.t.Fatalf("ron name history %s on %s: exit %d: %s", name, n.name, res.code, res.stderr)
	}
	var h struct {
		Name     string         `json:"name"`
		Versions []historyEntry `json:"versions"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &h); err != nil || h.Name != name {
		n.t.Fatalf("ron name history %s -o json printed %q: %v", name, res.stdout, err)
	}
	return h.Versions
}

// wantHistory compares a history with want, given as "version:b3" or
// "version:deleted", newest first.
func wantHistory(t *testing.T, got []historyEntry, want ...string) {
	t.Helper()
	var gs []string
	for _, e := range got {
		switch {
		case e.Deleted && e.B3 == nil:
			gs = append(gs, fmt.Sprintf("%d:deleted", e.Version))
		case !e.Deleted && e.B3 != nil:
			gs = append(gs, fmt.Sprintf("%d:%s", e.Version, *e.B3))
		default:
			gs = append(gs, fmt.Sprintf("%d:invalid(deleted=%t b3=%v)", e.Version, e.Deleted, e.B3))
		}
		if _, err := time.Parse(time.RFC3339Nano, e.UpdatedAt); err != nil {
			t.Errorf("history version %d: updated_at %q: %v", e.Version, e.UpdatedAt, err)
		}
	}
	if strings.Join(gs, " ") != strings.Join(want, " ") {
		t.Errorf("history (newest first):\n got %s\nwant %s", strings.Join(gs, " "), strings.Join(want, " "))
	}
}

// metricSeries returns every /metrics sample line of n that starts with
// prefix and contains all of labels.
func (n *node) metricSeries(prefix string, labels ...string) []string {
	n.t.Helper()
	resp, err := http.Get("http://" + n.admin + "/metrics")
	if err != nil {
		n.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(line, l)
		}
		if match {
			out = append(out, line)
		}
	}
	return out
}

// breakerState returns which of closed, half_open, open n's index breaker
// for peer reports as current ("" when it has no such series).
func (n *node) breakerState(peer *node) string {
	n.t.Helper()
	for _, s := range []string{"closed", "half_open", "open"} {
		if n.metric("ron_breaker_state", `role="index"`, `target="`+peer.index+`"`, `state="`+s+`"`) == 1 {
			return s
		}
	}
	return ""
}

// absentID is an object id no node holds, distinct per (test, i).
func absentID(t *testing.T, i int) string {
	return idOf([]byte(fmt.Sprintf("absent %s %d", t.Name(), i)))
}

// writeTree writes files (slash paths relative to a new temp dir) and
// returns the dir.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
