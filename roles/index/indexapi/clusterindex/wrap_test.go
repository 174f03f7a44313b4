package clusterindex

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// member is a storage member of a test view.
func member(id string, st cluster.State) cluster.Member {
	return cluster.Member{ID: id, Roles: []string{"storage"}, State: st,
		URLs: map[string]string{"storage": "http://" + id + ":5303"}}
}

// prov is a provider record of node at its member URL.
func prov(node string) indexapi.ProviderInfo {
	return indexapi.ProviderInfo{Node: node, Addr: "http://" + node + ":5303"}
}

func nodesOf(ps []indexapi.ProviderInfo) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Node
	}
	return out
}

// testView holds a alive, b dead, c left, d alive; e is unknown.
func testView() *cluster.View {
	return cluster.NewView("a", []cluster.Member{member("a", cluster.StateAlive), member("b", cluster.StateDead),
		member("c", cluster.StateLeft), member("d", cluster.StateAlive)}, time.Time{})
}

func TestAliveFirst(t *testing.T) {
	renamed := prov("d-old") // an unknown node id at an alive member's URL
	renamed.Addr = "http://d:5303/"
	cases := []struct {
		name string
		in   []indexapi.ProviderInfo
		want []string
	}{
		{"empty", nil, []string{}},
		{"all alive keep order", []indexapi.ProviderInfo{prov("d"), prov("a")}, []string{"d", "a"}},
		{"dead first moves", []indexapi.ProviderInfo{prov("b"), prov("a"), prov("d")}, []string{"a", "d", "b"}},
		{"left and dead keep their order", []indexapi.ProviderInfo{prov("c"), prov("b"), prov("d")}, []string{"d", "c", "b"}},
		{"unknown node is not alive", []indexapi.ProviderInfo{prov("e"), prov("a")}, []string{"a", "e"}},
		{"already last", []indexapi.ProviderInfo{prov("a"), prov("b"), prov("e")}, []string{"a", "b", "e"}},
		{"none alive", []indexapi.ProviderInfo{prov("e"), prov("b")}, []string{"e", "b"}},
		{"alive by URL", []indexapi.ProviderInfo{prov("b"), renamed}, []string{"d-old", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got := AliveFirst(in, testView())
			if g := nodesOf(got); !slices.Equal(g, tc.want) {
				t.Fatalf("order = %v, want %v", g, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Fatal("input modified")
			}
		})
	}
}

// fakeIndex answers Providers and Resolve with fixed lists and counts
// the other calls that reach it.
type fakeIndex struct {
	indexapi.Client // nil: other methods panic unless overridden
	providers       []indexapi.ProviderInfo
	err             error
	histories       int
}

func (f *fakeIndex) Providers(context.Context, store.ID, string, int) (indexapi.ProviderList, error) {
	return indexapi.ProviderList{Providers: slices.Clone(f.providers)}, f.err
}

func (f *fakeIndex) Resolve(_ context.Context, key string, _ bool) (indexapi.ResolveAnswer, error) {
	return indexapi.ResolveAnswer{Key: key, Providers: slices.Clone(f.providers)}, f.err
}

func (f *fakeIndex) History(context.Context, string) (indexapi.NameHistory, error) {
	f.histories++
	return indexapi.NameHistory{}, nil
}

func TestWrapReordersProvidersAndResolve(t *testing.T) {
	f := &fakeIndex{providers: []indexapi.ProviderInfo{prov("b"), prov("a")}}
	m := cluster.NewStatic(testView())
	c := Wrap(f, m)
	l, err := c.Providers(t.Context(), store.ID{}, "", 0)
	// a alive, then the placement fallback d, then dead b.
	if err != nil || !slices.Equal(nodesOf(l.Providers), []string{"a", "d", "b"}) {
		t.Fatalf("providers = %v, %v", nodesOf(l.Providers), err)
	}
	a, err := c.Resolve(t.Context(), "blog.example", false)
	if err != nil || a.Key != "blog.example" || !slices.Equal(nodesOf(a.Providers), []string{"a", "b"}) {
		t.Fatalf("resolve = %+v, %v", a, err)
	}
	// The view is read per call: b comes back, the index order stands.
	m.Set(cluster.NewView("a", []cluster.Member{member("a", cluster.StateAlive), member("b", cluster.StateAlive)}, time.Time{}))
	l, _ = c.Providers(t.Context(), store.ID{}, "", 0)
	if !slices.Equal(nodesOf(l.Providers), []string{"b", "a"}) {
		t.Fatalf("after b returned: %v", nodesOf(l.Providers))
	}
	if _, err := c.History(t.Context(), "x"); err != nil || f.histories != 1 {
		t.Fatalf("History did not pass through: %v, %d", err, f.histories)
	}
}

// TestWithPlacement: alive providers, then alive storage members by score
// (not self, not listed), then departed providers.
func TestWithPlacement(t *testing.T) {
	id := store.Sum([]byte("hello world")) // ranks b, a, d, c over node-a…d
	view := func(self string, states ...cluster.State) *cluster.View {
		var ms []cluster.Member
		for i, st := range states {
			ms = append(ms, member(fmt.Sprintf("node-%c", 'a'+i), st))
		}
		return cluster.NewView(self, ms, time.Time{})
	}
	pn := func(ids ...string) []indexapi.ProviderInfo {
		var out []indexapi.ProviderInfo
		for _, id := range ids {
			out = append(out, prov(id))
		}
		return out
	}
	alive, dead := cluster.StateAlive, cluster.StateDead
	cases := []struct {
		name string
		v    *cluster.View
		in   []indexapi.ProviderInfo
		want []string
	}{
		{"none listed: rank order without self", view("node-a", alive, alive, alive, alive), nil, []string{"node-b", "node-d", "node-c"}},
		{"listed ones first", view("node-z", alive, alive, alive, alive), pn("node-c"), []string{"node-c", "node-b", "node-a", "node-d"}},
		{"dead member not added", view("node-z", alive, dead, alive, alive), nil, []string{"node-a", "node-d", "node-c"}},
		{"departed provider stays last", view("node-z", alive, dead, alive, alive), pn("node-b"), []string{"node-a", "node-d", "node-c", "node-b"}},
		{"everyone listed", view("node-a", alive, alive), pn("node-b", "node-a"), []string{"node-b", "node-a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nodesOf(WithPlacement(AliveFirst(tc.in, tc.v), tc.v, id)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWrapNotFoundFallsBack: an index 404 becomes the placement list, and
// stays a 404 when there is nobody to ask.
func TestWrapNotFoundFallsBack(t *testing.T) {
	nf := httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no providers")
	f := &fakeIndex{err: nf}
	l, err := Wrap(f, cluster.NewStatic(testView())).Providers(t.Context(), store.ID{}, "", 0)
	if err != nil || !slices.Equal(nodesOf(l.Providers), []string{"d"}) {
		t.Fatalf("providers = %v, %v", nodesOf(l.Providers), err)
	}
	alone := cluster.NewView("a", []cluster.Member{member("a", cluster.StateAlive)}, time.Time{})
	if _, err := Wrap(f, cluster.NewStatic(alone)).Providers(t.Context(), store.ID{}, "", 0); !errors.Is(err, nf) {
		t.Fatalf("err = %v, want the 404", err)
	}
}

func TestWrapPassesErrorsAndNil(t *testing.T) {
	boom := errors.New("boom")
	f := &fakeIndex{err: boom}
	if _, err := Wrap(f, cluster.NewStatic(testView())).Providers(t.Context(), store.ID{}, "", 0); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if c := Wrap(f, nil); c != indexapi.Client(f) {
		t.Fatal("a nil membership must return the client itself")
	}
	if c := Wrap(nil, cluster.NewStatic(testView())); c != nil {
		t.Fatal("a nil client must stay nil")
	}
}
