package runtime

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape renders set in the Prometheus text format and parses it into
// series → value.
func scrape(t *testing.T, set *metrics.Set) map[string]float64 {
	t.Helper()
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	out := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// metric returns one series' value, failing if it is absent.
func metric(t *testing.T, set *metrics.Set, series string) float64 {
	t.Helper()
	got := scrape(t, set)
	v, ok := got[series]
	if !ok {
		t.Fatalf("series %s not exported; have %v", series, got)
	}
	return v
}
