package node

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/runtime/cluster"
)

// TestClusterMetaLatestWins: when a reload's metadata is sent while run is
// still sending the bound addresses with the config it started from, the
// last metadata sent is the reloaded one, with the bound addresses.
func TestClusterMetaLatestWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := DefaultConfig()
		old.Roles, old.Cluster.Enabled, old.Cluster.Zone = []string{"index"}, true, "z1"
		next := old
		next.Cluster.Zone = "z2"
		var (
			mu      sync.Mutex
			sent    []cluster.Meta
			entered = make(chan struct{})
			release = make(chan struct{})
		)
		cn := &clusterNode{id: "node-m", want: &old, meta: nodeMeta(&old, "node-m", nil, nil)}
		cn.send = func(m cluster.Meta) error {
			mu.Lock()
			first := len(sent) == 0 && entered != nil
			ch := entered
			entered = nil
			mu.Unlock()
			if first {
				close(ch)
				<-release // run's send stalls while the reload sends
			}
			mu.Lock()
			sent = append(sent, m)
			mu.Unlock()
			return nil
		}
		cn.mu.Lock()
		cn.bound, cn.gen = map[string]string{"index": "127.0.0.1:4321"}, cn.gen+1
		cn.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- cn.updateMeta(nil) }() // as run, with the bound addresses
		synctest.Wait()
		if err := cn.updateMeta(&next); err != nil {
			t.Fatalf("reload's update: %v", err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("run's update: %v", err)
		}
		want := nodeMeta(&next, "node-m", map[string]string{"index": "127.0.0.1:4321"}, nil)
		mu.Lock()
		defer mu.Unlock()
		if last := sent[len(sent)-1]; !reflect.DeepEqual(last, want) || !reflect.DeepEqual(cn.meta, want) {
			t.Fatalf("last sent %+v (recorded %+v), want %+v", last, cn.meta, want)
		}
	})
}

// TestClusterMetaRejectsInvalid: metadata that does not validate fails the
// update and leaves the config to gossip unchanged.
func TestClusterMetaRejectsInvalid(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Roles, cfg.Cluster.Enabled = []string{"index"}, true
	bad := cfg
	bad.Index.AdvertiseURL = "http://" + strings.Repeat("h", 600)
	sends := 0
	cn := &clusterNode{id: "node-v", want: &cfg, meta: nodeMeta(&cfg, "node-v", nil, nil),
		send: func(cluster.Meta) error { sends++; return nil }}
	if err := cn.updateMeta(&bad); err == nil || !strings.Contains(err.Error(), "512") {
		t.Fatalf("oversized metadata: %v", err)
	}
	if err := cn.updateMeta(nil); err != nil || sends != 0 || cn.want != &cfg {
		t.Fatalf("after a refused update: %v, %d sends", err, sends)
	}
}
