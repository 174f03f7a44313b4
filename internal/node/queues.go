package node

import (
	"regexp"
	"sort"

	"github.com/ronhq/ron/runtime"
)

var queueSeries = regexp.MustCompile(`^ron_queue_(depth|capacity|dropped_total)\{role="([^"]*)",queue="([^"]*)"\}$`)

// queueStatuses reads every bounded queue's depth, capacity and drops from
// the metrics, so any queue that exports the shared queue metrics shows up in
// /api/v1/status without registering anywhere else.
func queueStatuses(m *runtime.Metrics) []QueueStatus {
	byKey := map[[2]string]*QueueStatus{}
	for series, v := range m.Values() {
		sm := queueSeries.FindStringSubmatch(series)
		if sm == nil {
			continue
		}
		key := [2]string{sm[2], sm[3]}
		q := byKey[key]
		if q == nil {
			q = &QueueStatus{Role: sm[2], Queue: sm[3]}
			byKey[key] = q
		}
		switch sm[1] {
		case "depth":
			q.Depth = v
		case "capacity":
			q.Capacity = v
		default:
			q.Dropped = v
		}
	}
	out := make([]QueueStatus, 0, len(byKey))
	for _, q := range byKey {
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role < out[j].Role
		}
		return out[i].Queue < out[j].Queue
	})
	return out
}
