package storagecmd

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Spec vectors (docs/storage.md §1).
const (
	helloID = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
	emptyID = "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
)

// bigBody is the 102,400-byte vector: byte i = i mod 251.
func bigBody() []byte {
	b := make([]byte, 102400)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// storageNode is a running ephemeral node with only the storage role
// (nodetest.Start); base is its storage listener's URL.
type storageNode struct {
	t    *testing.T
	n    *node.Node
	base string
}

// startStorage starts a storage-only node that stops at the end of the
// test.
func startStorage(t *testing.T) *storageNode {
	t.Helper()
	n := nodetest.Start(t, func(c *node.Config) { c.Roles = []string{storageapi.RoleName} })
	return &storageNode{t: t, n: n, base: "http://" + n.Addr(storageapi.RoleName)}
}

// put stores body with POST /o and a write token minted by the node,
// returning the id.
func (s *storageNode) put(body []byte, ctype string) string {
	s.t.Helper()
	tok, _, err := s.n.Keys().Mint(auth.MintOptions{Scopes: []string{storageapi.ScopeWrite}, TTL: time.Hour})
	if err != nil {
		s.t.Fatal(err)
	}
	token := func(context.Context) (string, error) { return tok, nil }
	c := storageapi.NewHTTPClient(s.base, token, client.Options{})
	defer c.Close()
	res, err := c.Put(context.Background(), bytes.NewReader(body), int64(len(body)), nil, ctype)
	if err != nil {
		s.t.Fatalf("put: %v", err)
	}
	return res.CID
}
