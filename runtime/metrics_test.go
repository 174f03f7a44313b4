package runtime

import (
	"testing"

	"github.com/VictoriaMetrics/metrics"
)

func TestMetricName(t *testing.T) {
	tests := []struct {
		name   string
		labels []string
		want   string
	}{
		{"up", nil, "ron_up"},
		{"ron_up", nil, "ron_up"},
		{"queue_depth", []string{"queue", "work", "role", "storage"}, `ron_queue_depth{role="storage",queue="work"}`},
		{"x_total", []string{"b", "2", "a", "1", "role", "r"}, `ron_x_total{role="r",a="1",b="2"}`},
		{"esc", []string{"v", "a\"b\\c\nd"}, `ron_esc{v="a\"b\\c\nd"}`},
	}
	for _, tt := range tests {
		if got := MetricName(tt.name, tt.labels...); got != tt.want {
			t.Errorf("MetricName(%q, %q) = %s, want %s", tt.name, tt.labels, got, tt.want)
		}
	}
}

func TestMetricNamePanics(t *testing.T) {
	for _, labels := range [][]string{{"role"}, {"bad-key", "v"}, {"a", "1", "a", "2"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MetricName(%q) did not panic", labels)
				}
			}()
			MetricName("x", labels...)
		}()
	}
}

func TestMetricsEscapedValuesAreAccepted(t *testing.T) {
	set := metrics.NewSet()
	m := NewMetrics(set)
	m.Counter("odd_total", "role", "node", "endpoint", `/o/{b3}"x\`).Add(2)
	if v := metric(t, set, `ron_odd_total{role="node",endpoint="/o/{b3}\"x\\"}`); v != 2 {
		t.Fatalf("value %v", v)
	}
}

func TestMetricsGetOrCreate(t *testing.T) {
	set := metrics.NewSet()
	m := NewMetrics(set)
	m.Counter("c_total", "role", "a").Inc()
	m.Counter("c_total", "role", "a").Inc()
	m.BusyRejection("gateway", "/o/{b3}")
	m.Histogram("lat_seconds", "role", "a").Update(0.1)
	if h1, h2 := m.Histogram("lat_seconds", "role", "a"), m.Histogram("lat_seconds", "role", "a"); h1 != h2 {
		t.Fatal("histogram not shared")
	}
	m.Gauge("g", func() float64 { return 1 }, "role", "a")
	m.Gauge("g", func() float64 { return 7 }, "role", "a") // replaces, no double registration
	m.Gauge("s", nil, "role", "a").Set(4)
	got := scrape(t, set)
	want := map[string]float64{
		`ron_c_total{role="a"}`: 2,
		`ron_busy_rejections_total{role="gateway",endpoint="/o/{b3}"}`: 1,
		`ron_g{role="a"}`:                 7,
		`ron_s{role="a"}`:                 4,
		`ron_lat_seconds_count{role="a"}`: 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if m.Set() != set {
		t.Error("Set() is not the wrapped set")
	}
}
