package tenants

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// errDown is the fake registry's answer while it is down.
var errDown = httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "registry down")

// fakeRegistry is a registryapi.Client over in-memory versions. Watch hands out a
// channel the test feeds with announce; it is closed when the watch's ctx
// ends or the test calls drop.
type fakeRegistry struct {
	t *testing.T

	mu         sync.Mutex
	versions   map[uint64]descriptor.Artifact
	head       uint64
	down       bool // Head, Get and Watch fail
	watchFails int  // the next Watch calls that fail
	gets       []uint64
	heads      []time.Time
	watches    []time.Time
	since      []*uint64
	ch         chan registryapi.Update
	closeCh    func()
}

var _ registryapi.Client = (*fakeRegistry)(nil)

func newFakeRegistry(t *testing.T) *fakeRegistry {
	return &fakeRegistry{t: t, versions: map[uint64]descriptor.Artifact{}}
}

// commit adds version v with the tenant items, chained on v−1 (or genesis),
// makes it HEAD and returns its announcement.
func (r *fakeRegistry) commit(v uint64, items ...map[string]any) registryapi.Update {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := descriptor.ZeroHash
	if p, ok := r.versions[v-1]; ok && v > 0 {
		prev = p.PayloadB3
	}
	s := validSet(r.t, v, prev, items...)
	r.versions[v] = artifactOf(s)
	r.head = max(r.head, v)
	return registryapi.Update{Version: v, PayloadB3: s.B3, CommittedAt: s.CreatedAt}
}

// announce sends u on the open watch; it fails the test when none is open.
func (r *fakeRegistry) announce(u registryapi.Update) {
	r.t.Helper()
	r.mu.Lock()
	ch := r.ch
	r.mu.Unlock()
	if ch == nil {
		r.t.Fatal("no open watch")
	}
	ch <- u
}

// drop closes the open watch's channel, as a registry shutting down does.
func (r *fakeRegistry) drop() {
	r.mu.Lock()
	closeCh := r.closeCh
	r.ch, r.closeCh = nil, nil
	r.mu.Unlock()
	if closeCh != nil {
		closeCh()
	}
}

func (r *fakeRegistry) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// calls returns the versions fetched, and the times of Head and Watch calls.
func (r *fakeRegistry) calls() (gets []uint64, heads, watches []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.gets), slices.Clone(r.heads), slices.Clone(r.watches)
}

func (r *fakeRegistry) Head(ctx context.Context) (registryapi.Head, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heads = append(r.heads, time.Now())
	if r.down {
		return registryapi.Head{}, errDown
	}
	a := r.versions[r.head]
	return registryapi.Head{Version: a.Version, PayloadB3: a.PayloadB3, CommittedAt: a.CommittedAt}, nil
}

func (r *fakeRegistry) Get(ctx context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gets = append(r.gets, v)
	a, ok := r.versions[v]
	switch {
	case r.down:
		return a, nil, errDown
	case !ok:
		return a, nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no version %d", v)
	}
	return a, nil, nil
}

func (r *fakeRegistry) Watch(ctx context.Context, since *uint64) (<-chan registryapi.Update, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watches = append(r.watches, time.Now())
	r.since = append(r.since, since)
	if r.down || r.watchFails > 0 {
		r.watchFails = max(0, r.watchFails-1)
		return nil, errDown
	}
	if r.ch != nil {
		r.t.Error("second watch while one is open")
	}
	ch := make(chan registryapi.Update, 64)
	var once sync.Once
	closeCh := func() { once.Do(func() { close(ch) }) }
	r.ch, r.closeCh = ch, closeCh
	go func() { // fake registry-watch: ends with ctx or drop
		<-ctx.Done()
		r.mu.Lock()
		if r.ch == ch {
			r.ch, r.closeCh = nil, nil
		}
		r.mu.Unlock()
		closeCh()
	}()
	return ch, nil
}

var errReadOnly = errors.New("fake registry: read only")

func (r *fakeRegistry) Propose(context.Context, descriptor.ProposeRequest) (registryapi.Proposed, error) {
	return registryapi.Proposed{}, errReadOnly
}

func (r *fakeRegistry) ProposeRaw(context.Context, []byte) (registryapi.Proposed, error) {
	return registryapi.Proposed{}, errReadOnly
}

func (r *fakeRegistry) Proposals(context.Context) ([]registryapi.ProposalSummary, error) {
	return nil, errReadOnly
}

func (r *fakeRegistry) Proposal(context.Context, string) (registryapi.Proposal, error) {
	return registryapi.Proposal{}, errReadOnly
}

func (r *fakeRegistry) Approve(context.Context, string, descriptor.Approval) (registryapi.ApprovalResult, error) {
	return registryapi.ApprovalResult{}, errReadOnly
}

func (r *fakeRegistry) Commit(context.Context, string) (registryapi.Committed, error) {
	return registryapi.Committed{}, errReadOnly
}
