package registryapi

import (
	"fmt"
	"testing"
)

func TestPushDropsOldest(t *testing.T) {
	ch := make(chan Update, 2)
	for v := uint64(1); v <= 4; v++ {
		PushLatest(ch, Update{Version: v})
	}
	if a, b := <-ch, <-ch; a.Version != 3 || b.Version != 4 {
		t.Fatalf("kept %d, %d; want 3, 4", a.Version, b.Version)
	}
}

func TestSSEFrameParse(t *testing.T) {
	lines := []string{
		"retry: 2000", "",
		": hb", "",
		"id: 7", "event: registry.update", `data: {"version":7,`, `data: "payload_b3":"b3:x","committed_at":"t","corr_id":"c"}`, "",
		"id: 8", "event: other", `data: {"version":8}`, "",
		"event: registry.update", "data: not json", "",
		"event:registry.update", `data:{"version":9}`, "",
	}
	var f sseFrame
	var got []Update
	for _, l := range lines {
		if u, ok := f.line([]byte(l)); ok {
			got = append(got, u)
		}
	}
	want := []Update{{Version: 7, PayloadB3: "b3:x", CommittedAt: "t", CorrID: "c"}, {Version: 9}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}
