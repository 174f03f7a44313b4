package indexcmd

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Object ids used as pointer targets.
const (
	idA = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
	idB = "b3:ced5d8e546f32566fd3e768ca208299be821a2147db8894d04492243f22fa331"
)

// cliNode is an index server (the role's real handlers on an in-memory
// database and a settable clock) on a loopback listener, and the
// client-side view of a node whose configured index listener it is.
type cliNode struct {
	clk   *testclock.Clock
	h     *index.Handlers
	addr  string // host:port of the index listener
	token string // RON_TOKEN seen by the commands ("" none)
}

func newCLINode(t *testing.T) *cliNode {
	t.Helper()
	clk := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	db, err := indexdb.Open(context.Background(), memkv.New(), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := keys.Mint(auth.MintOptions{Scopes: []string{indexapi.ScopeWrite}, TTL: 24 * time.Hour, Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpx.NewServer(httpx.ServerOptions{Role: "index", Log: zerolog.Nop(), Metrics: metrics.NewSet(),
		Limits: httpx.DefaultIngress().Limits()})
	h := index.NewHandlers(db, keys, clk.Now)
	h.Mount(srv.Echo())
	ts := httptest.NewServer(srv.Echo())
	t.Cleanup(ts.Close)
	return &cliNode{clk: clk, h: h, addr: strings.TrimPrefix(ts.URL, "http://"), token: token}
}

func mustID(t *testing.T, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ann is a provider announcement of id by node.
func ann(id store.ID, node string, ttl time.Duration) indexapi.Announcement {
	return indexapi.Announcement{ID: id, Node: node, Addr: "http://" + node + ":5303", TTL: ttl}
}
