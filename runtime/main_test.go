package runtime

import (
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape parses set's series → value.
func scrape(t *testing.T, set *metrics.Set) map[string]float64 {
	t.Helper()
	return NewMetrics(set).Values()
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
