package clusterindex

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/inproc"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/topology"
	"github.com/ronhq/ron/store"
)

// net routes requests by host to in-process index members; a host marked
// down refuses connections.
type fakeNet struct {
	mu     sync.Mutex
	status map[string]int // host → status every call answers (0: 200)
	down   map[string]bool
	calls  []string // "host METHOD path", in order
	list   []indexapi.ProviderInfo
}

func newFakeNet() *fakeNet { return &fakeNet{status: map[string]int{}, down: map[string]bool{}} }

func (n *fakeNet) RoundTrip(req *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.calls = append(n.calls, req.URL.Hostname()+" "+req.Method+" "+req.URL.Path)
	down, status := n.down[req.URL.Hostname()], n.status[req.URL.Hostname()]
	n.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return inproc.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			httpx.WriteError(w, "", httpx.NewError(status, "test", "status %d", status))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/providers/"):
			_ = json.NewEncoder(w).Encode(indexapi.ProviderList{B3: strings.TrimPrefix(r.URL.Path, "/providers/"), Providers: n.list})
		default:
			_ = json.NewEncoder(w).Encode(indexapi.NameRecord{Name: strings.TrimPrefix(r.URL.Path, "/names/"), Version: 1})
		}
	})).RoundTrip(req)
}

func (n *fakeNet) hosts() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.calls))
	for i, c := range n.calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	n.calls = nil
	return out
}

// indexView: i1, i2 alive index members (http://<id>:1), s1 a storage
// member, s2 a dead storage member.
func indexView(extra ...cluster.Member) *cluster.View {
	ms := append([]cluster.Member{zoned("i1", "", cluster.StateAlive, "index"), zoned("i2", "", cluster.StateAlive, "index"),
		zoned("s1", "", cluster.StateAlive, "storage"), zoned("s2", "", cluster.StateDead, "storage")}, extra...)
	return cluster.NewView("gw", ms, time.Time{})
}

func newTestMembers(m cluster.Membership, n *fakeNet) *Members {
	return NewMembers(MembersOptions{Membership: m, Client: client.Options{HTTP: &http.Client{Transport: n}, Retries: -1},
		Token: func(context.Context) (string, error) { return "tok", nil }})
}

func TestMembersFallBack(t *testing.T) {
	id := store.Sum([]byte("x"))
	name := "blog.example"
	cases := []struct {
		name  string
		call  func(c indexapi.Client) error
		key   []byte
		first func(n *fakeNet, host string) // makes the first-ranked member fail
		asked int                           // members asked
		code  int                           // final status (0: success)
	}{
		{"providers after 503", func(c indexapi.Client) error { _, err := c.Providers(t.Context(), id, "", 0); return err },
			id[:], func(n *fakeNet, h string) { n.status[h] = 503 }, 2, 0},
		{"providers after unreachable", func(c indexapi.Client) error { _, err := c.Providers(t.Context(), id, "", 0); return err },
			id[:], func(n *fakeNet, h string) { n.down[h] = true }, 2, 0},
		// A 404 is not asked again; the placement fallback (alive s1) answers.
		{"providers 404 is final", func(c indexapi.Client) error { _, err := c.Providers(t.Context(), id, "", 0); return err },
			id[:], func(n *fakeNet, h string) { n.status[h] = 404 }, 1, 0},
		{"get name after 429", func(c indexapi.Client) error { _, err := c.GetName(t.Context(), name); return err },
			ResolveKey(name), func(n *fakeNet, h string) { n.status[h] = 429 }, 2, 0},
		{"resolve name@version", func(c indexapi.Client) error { _, err := c.Resolve(t.Context(), name+"@3", false); return err },
			ResolveKey(name), func(n *fakeNet, h string) { n.status[h] = 502 }, 2, 0},
		{"set name 503 is not resent", func(c indexapi.Client) error {
			_, err := c.SetName(t.Context(), name, id, indexapi.Cond{})
			return err
		}, ResolveKey(name), func(n *fakeNet, h string) { n.status[h] = 503 }, 1, 503},
		{"set name unreachable goes on", func(c indexapi.Client) error {
			_, err := c.SetName(t.Context(), name, id, indexapi.Cond{})
			return err
		}, ResolveKey(name), func(n *fakeNet, h string) { n.down[h] = true }, 2, 0},
		{"delete name 500 is not resent", func(c indexapi.Client) error {
			_, err := c.DeleteName(t.Context(), name, indexapi.Cond{})
			return err
		}, ResolveKey(name), func(n *fakeNet, h string) { n.status[h] = 500 }, 1, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := newFakeNet()
			m := newTestMembers(cluster.NewStatic(indexView()), n)
			order := topology.IDs(m.pool.Ranked(tc.key))
			tc.first(n, order[0])
			err := tc.call(m)
			if got := httpStatus(err); got != tc.code {
				t.Fatalf("status = %d (%v), want %d", got, err, tc.code)
			}
			if got := n.hosts(); !slices.Equal(got, order[:tc.asked]) {
				t.Fatalf("asked %v, want %v", got, order[:tc.asked])
			}
		})
	}
}

func httpStatus(err error) int {
	if err == nil {
		return 0
	}
	return httpx.AsError(err).Status
}

func TestMembersOrderProvidersAndNoMember(t *testing.T) {
	n := newFakeNet()
	n.list = []indexapi.ProviderInfo{prov("s2"), prov("s1")}
	n.list[0].Addr, n.list[1].Addr = "http://s2:1", "http://s1:1"
	st := cluster.NewStatic(indexView())
	m := newTestMembers(st, n)
	l, err := m.Providers(t.Context(), store.Sum([]byte("x")), "", 0)
	if err != nil || !slices.Equal(nodesOf(l.Providers), []string{"s1", "s2"}) {
		t.Fatalf("providers = %v, %v", nodesOf(l.Providers), err)
	}
	empty := newTestMembers(cluster.NewStatic(cluster.NewView("gw", nil, time.Time{})), n)
	_, err = empty.GetName(t.Context(), "blog.example")
	he := httpx.AsError(err)
	if he.Status != 503 || he.Details["reason"] != "no_member" || empty.Len() != 0 {
		t.Fatalf("no member: %+v", he)
	}
}

func TestMembersFollowMembership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newFakeNet()
		st := cluster.NewStatic(cluster.NewView("gw", nil, time.Time{}))
		m := newTestMembers(st, n)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		if _, err := m.GetName(ctx, "blog.example"); httpStatus(err) != 503 {
			t.Fatalf("before any member: %v", err)
		}
		st.Set(indexView())
		synctest.Wait()
		if _, err := m.GetName(ctx, "blog.example"); err != nil || m.Len() != 2 {
			t.Fatalf("after members joined: %v (%d members)", err, m.Len())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// zoned is a member running roles in zone, at http://<id>:1.
func zoned(id, zone string, st cluster.State, roles ...string) cluster.Member {
	urls := map[string]string{}
	for _, r := range roles {
		urls[r] = "http://" + id + ":1"
	}
	return cluster.Member{ID: id, Roles: roles, URLs: urls, Zone: zone, State: st}
}
