package committer

import (
	"fmt"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestNextSnapshotCopiesOnlyChangedShards: a published snapshot never
// changes, and a batch copies only the shards its changed ids fall in.
func TestNextSnapshotCopiesOnlyChangedShards(t *testing.T) {
	st := newState()
	st.head = &Head{Set: &descriptor.Set{Quorum: descriptor.Quorum{M: 1, N: 1}}}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		id := fmt.Sprintf("p_%032x", i)
		st.props[id] = &proposal{id: id, status: StatusCommitted, closedAt: now, proposedAt: now, expiresAt: now}
	}
	first := fullSnapshot(st)
	changed := fmt.Sprintf("p_%032x", 7)
	st.props[changed] = &proposal{id: changed, status: StatusStale, closedAt: now, proposedAt: now, expiresAt: now}
	gone := fmt.Sprintf("p_%032x", 8)
	delete(st.props, gone)
	next := nextSnapshot(first, st, []string{changed, gone})

	if first.props.get(changed).view.Status != StatusCommitted || first.props.get(gone) == nil {
		t.Fatal("the published snapshot changed")
	}
	if next.props.get(changed).view.Status != StatusStale || next.props.get(gone) != nil {
		t.Fatal("the next snapshot lacks the batch's changes")
	}
	touched := map[int]bool{shardOf(changed): true, shardOf(gone): true}
	for k := range propShards {
		same := fmt.Sprintf("%p", first.props[k]) == fmt.Sprintf("%p", next.props[k])
		if same == touched[k] {
			t.Errorf("shard %d: shared %v, touched %v", k, same, touched[k])
		}
	}
}
