package node

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
)

// committedSet returns the canonical payload of a valid set at version v
// listing node items ids.
func committedSet(t *testing.T, v uint64, ids ...string) *descriptor.Set {
	t.Helper()
	pub := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	items := fmt.Sprintf(`{"kind":"signer","id":"org:ron.example#k1","algo":"ed25519","pubkey":%q},{"kind":"quorum","id":"quorum","m":1,"n":1}`,
		base64.StdEncoding.EncodeToString(pub))
	for _, id := range ids {
		items += fmt.Sprintf(`,{"kind":"node","id":%q,"roles":["storage"]}`, id)
	}
	raw := fmt.Sprintf(`{"version":%d,"prev_hash":"b3:%064d","created_at":"2026-01-01T00:00:00Z","note":"","items":[%s]}`, v, 0, items)
	set, err := descriptor.ParseSet([]byte(raw), descriptor.Limits{}, time.Time{})
	if err != nil {
		t.Fatalf("test set: %v", err)
	}
	return set
}

// fakeRegistry serves versions as a registry client; a nil entry fails.
type fakeRegistry struct {
	registryapi.Client
	mu       sync.Mutex
	head     uint64
	versions map[uint64]*descriptor.Set
	headErr  error
	gets     int
}

func (f *fakeRegistry) Head(context.Context) (registryapi.Head, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.headErr != nil {
		return registryapi.Head{}, f.headErr
	}
	return registryapi.Head{Version: f.head, PayloadB3: f.versions[f.head].B3}, nil
}

func (f *fakeRegistry) Get(_ context.Context, v uint64) (descriptor.Artifact, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	s := f.versions[v]
	if s == nil {
		return descriptor.Artifact{}, nil, errors.New("no such version")
	}
	return descriptor.Artifact{Version: v, Payload: s.Canonical, PayloadB3: s.B3}, s.Canonical, nil
}

func (f *fakeRegistry) set(fn func(*fakeRegistry)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func allowedIDs(a *memberAllowList) ([]string, bool) {
	ids, ok := a.allowed()
	return slices.Sorted(maps.Keys(ids)), ok
}

// TestMemberAllowList: nothing is known until a HEAD is read (then
// retried 1 s later); then the node items of HEAD are admitted, a
// RegistryUpdated event brings a new version at once, an event whose
// payload does not match or an older version changes nothing, and a
// failing registry keeps the last set.
func TestMemberAllowList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := &fakeRegistry{head: 2, versions: map[uint64]*descriptor.Set{2: committedSet(t, 2, "node-a", "node-b")},
			headErr: errors.New("registry starting")}
		bus := runtime.NewBus(nil)
		a := newMemberAllowList(zerolog.Nop())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { a.run(ctx, reg, bus); close(done) }()
		synctest.Wait()
		if ids, ok := a.allowed(); ok || ids != nil {
			t.Fatalf("admitted before any HEAD: %v", ids)
		}
		reg.set(func(f *fakeRegistry) { f.headErr = nil })
		time.Sleep(2 * time.Second)
		if ids, ok := allowedIDs(a); !ok || !slices.Equal(ids, []string{"node-a", "node-b"}) {
			t.Fatalf("after HEAD: %v %t", ids, ok)
		}
		v3 := committedSet(t, 3, "node-c")
		reg.set(func(f *fakeRegistry) { f.versions[3] = v3 })
		bus.Publish(runtime.RegistryUpdated{Version: 3, B3: "b3:wrong"})
		bus.Publish(runtime.RegistryUpdated{Version: 1, B3: v3.B3})
		synctest.Wait()
		if ids, _ := allowedIDs(a); !slices.Equal(ids, []string{"node-a", "node-b"}) {
			t.Fatalf("mismatched or old event applied: %v", ids)
		}
		bus.Publish(runtime.RegistryUpdated{Version: 3, B3: v3.B3})
		synctest.Wait()
		if ids, _ := allowedIDs(a); !slices.Equal(ids, []string{"node-c"}) {
			t.Fatalf("after event: %v", ids)
		}
		reg.set(func(f *fakeRegistry) { f.headErr = errors.New("down") })
		time.Sleep(2 * allowListHeadInterval)
		if ids, ok := allowedIDs(a); !ok || !slices.Equal(ids, []string{"node-c"}) {
			t.Fatalf("failing registry changed the set: %v %t", ids, ok)
		}
		cancel()
		<-done
	})
}

// TestNodeIDsRefusesBadPayload: an unreadable payload is an error, not an
// empty set.
func TestNodeIDsRefusesBadPayload(t *testing.T) {
	for _, p := range []string{"", "{}", `{"version":1}`, "not json"} {
		if ids, err := nodeIDs([]byte(p)); err == nil {
			t.Errorf("payload %q gave %v", p, ids)
		}
	}
}
