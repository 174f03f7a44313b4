package node_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/store"
)

// BenchmarkObjectGet64K compares a 64 KiB GET /o/{b3} through the gateway
// (storage in-process) with the same GET from storage directly, over
// loopback HTTP (docs/gateway.md §12 forwarding cost; scripts/bench/gateway.sh
// measures the same with wrk).
func BenchmarkObjectGet64K(b *testing.B) {
	n, storageAddr := startNode(b, func(c *node.Config) {
		c.Roles = []string{"storage", "gateway"}
		c.Gateway.AnonRPS = 1e9
	})
	body := make([]byte, 64<<10)
	_, _ = rand.Read(body)
	id := store.Sum(body)
	tok, _, _ := n.Keys().Mint(authWrite())
	req, _ := http.NewRequest("POST", "http://"+storageAddr+"/o", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	put := &http.Client{Transport: &http.Transport{}}
	defer put.CloseIdleConnections()
	if resp, err := put.Do(req); err != nil || resp.StatusCode/100 != 2 {
		b.Fatalf("put: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	gw := n.Addr("gateway")
	for _, tc := range []struct{ name, addr string }{{"gateway", gw}, {"storage", storageAddr}} {
		b.Run(tc.name, func(b *testing.B) {
			url := "http://" + tc.addr + "/o/" + id.String()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer c.CloseIdleConnections()
			b.SetBytes(int64(len(body)))
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(url)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || n != int64(len(body)) {
						b.Fatalf("%d, %d bytes", resp.StatusCode, n)
					}
				}
			})
		})
	}
}

func authWrite() auth.MintOptions {
	return auth.MintOptions{Scopes: []string{"storage:write"}, TTL: time.Hour}
}
