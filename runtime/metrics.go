package runtime

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics is the one place where ron metric names are built. Names get the
// "ron_" prefix (unless they already carry it); labels are given as
// key, value pairs and always rendered in a stable order ("role" first,
// the other keys sorted), with values escaped for the Prometheus text
// format. All accessors have get-or-create semantics and are safe for
// concurrent use. Use one Metrics per *metrics.Set.
type Metrics struct {
	set *metrics.Set

	mu     sync.Mutex
	gauges map[string]*atomic.Pointer[func() float64] // callback gauges by full name
}

// NewMetrics wraps set. A nil set gets a fresh private set (handy in tests).
func NewMetrics(set *metrics.Set) *Metrics {
	if set == nil {
		set = metrics.NewSet()
	}
	return &Metrics{set: set, gauges: map[string]*atomic.Pointer[func() float64]{}}
}

// orNew returns m, or a Metrics over a private set when m is nil, so that
// constructors accept a nil *Metrics.
func (m *Metrics) orNew() *Metrics {
	if m == nil {
		return NewMetrics(nil)
	}
	return m
}

// Set returns the underlying metrics set (for /metrics).
func (m *Metrics) Set() *metrics.Set { return m.set }

// Counter returns the counter ron_<name>{labels}, creating it on first use.
func (m *Metrics) Counter(name string, labels ...string) *metrics.Counter {
	return m.set.GetOrCreateCounter(MetricName(name, labels...))
}

// Histogram returns the histogram ron_<name>{labels}, creating it on first use.
func (m *Metrics) Histogram(name string, labels ...string) *metrics.Histogram {
	return m.set.GetOrCreateHistogram(MetricName(name, labels...))
}

// Gauge returns the gauge ron_<name>{labels}. With a nil fn the gauge is a
// settable one (Set/Inc/Dec). With a callback, registering the same name
// again replaces the callback instead of registering twice: the newest
// owner of a name (for example a queue re-created under the same name)
// is the one reported.
func (m *Metrics) Gauge(name string, fn func() float64, labels ...string) *metrics.Gauge {
	full := MetricName(name, labels...)
	if fn == nil {
		return m.set.GetOrCreateGauge(full, nil)
	}
	m.mu.Lock()
	h, ok := m.gauges[full]
	if !ok {
		h = new(atomic.Pointer[func() float64])
		m.gauges[full] = h
	}
	h.Store(&fn)
	m.mu.Unlock()
	return m.set.GetOrCreateGauge(full, func() float64 { return (*h.Load())() })
}

// BusyRejection counts one request rejected because a queue or an ingress
// limit was full: ron_busy_rejections_total{role,endpoint}. endpoint is a
// route template ("/o/{b3}"), never a raw path.
func (m *Metrics) BusyRejection(role, endpoint string) {
	m.Counter("busy_rejections_total", "role", role, "endpoint", endpoint).Inc()
}

var labelKeyRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// MetricName builds "ron_<name>{k1="v1",…}" from key, value pairs: "role"
// first, the other keys sorted, values escaped (\\, \", \n). It panics on an
// odd number of label strings, an invalid or duplicate key: these are
// programming errors.
func MetricName(name string, labels ...string) string {
	if !strings.HasPrefix(name, "ron_") {
		name = "ron_" + name
	}
	if len(labels) == 0 {
		return name
	}
	pairs := labelPairs(labels)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p[0])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(p[1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// labelPairs validates and orders key, value pairs.
func labelPairs(labels []string) [][2]string {
	if len(labels)%2 != 0 {
		panic(fmt.Sprintf("runtime: odd number of label strings %q", labels))
	}
	pairs := make([][2]string, 0, len(labels)/2)
	for i := 0; i < len(labels); i += 2 {
		if !labelKeyRE.MatchString(labels[i]) {
			panic(fmt.Sprintf("runtime: invalid label name %q", labels[i]))
		}
		pairs = append(pairs, [2]string{labels[i], labels[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int {
		switch {
		case a[0] == b[0]:
			return 0
		case a[0] == "role":
			return -1
		case b[0] == "role":
			return 1
		}
		return strings.Compare(a[0], b[0])
	})
	for i := 1; i < len(pairs); i++ {
		if pairs[i][0] == pairs[i-1][0] {
			panic(fmt.Sprintf("runtime: duplicate label name %q", pairs[i][0]))
		}
	}
	return pairs
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(v string) string { return labelEscaper.Replace(v) }

// Values renders the set in the Prometheus text format and parses it back
// into series → value ("ron_queue_depth{role=\"storage\",queue=\"work\"}" →
// 3). Histograms appear as their _bucket, _sum and _count series. It is the
// one reader of our own metrics: status pages and tests use it.
func (m *Metrics) Values() map[string]float64 {
	var buf bytes.Buffer
	m.set.WritePrometheus(&buf)
	out := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil && i > 0 {
			out[line[:i]] = v
		}
	}
	return out
}
