package roles

import (
	"bufio"
	"bytes"
	"regexp"
	"sort"
	"strconv"

	"github.com/VictoriaMetrics/metrics"
)

var queueMetricLine = regexp.MustCompile(`^ron_queue_(depth|capacity|dropped_total)\{role="([^"]*)",queue="([^"]*)"\} (\S+)$`)

// queueStatuses reads every bounded queue's depth, capacity and drops from
// the metrics set, so any queue that exports the shared queue metrics shows up
// in /api/v1/status without registering anywhere else.
func queueStatuses(set *metrics.Set) []QueueStatus {
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	byKey := map[[2]string]*QueueStatus{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		m := queueMetricLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := [2]string{m[2], m[3]}
		q := byKey[key]
		if q == nil {
			q = &QueueStatus{Role: m[2], Queue: m[3]}
			byKey[key] = q
		}
		v, _ := strconv.ParseFloat(m[4], 64)
		switch m[1] {
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
