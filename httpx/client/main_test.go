package client

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRT is an http.RoundTripper for synctest bubbles, where real network
// connections do not work.
type fakeRT struct {
	mu     sync.Mutex
	calls  int
	bodies []string
	fn     func(n int, r *http.Request) (*http.Response, error)
}

func (f *fakeRT) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	f.mu.Lock()
	n := f.calls
	f.calls++
	f.bodies = append(f.bodies, string(body))
	fn := f.fn
	f.mu.Unlock()
	return fn(n, r)
}

func (f *fakeRT) set(fn func(n int, r *http.Request) (*http.Response, error)) {
	f.mu.Lock()
	f.fn = fn
	f.mu.Unlock()
}

func (f *fakeRT) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func reply(r *http.Request, status int, kv ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}
}

func status(code int, kv ...string) func(int, *http.Request) (*http.Response, error) {
	return func(_ int, r *http.Request) (*http.Response, error) { return reply(r, code, kv...), nil }
}

func hang(_ int, r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// newFake returns a Client over a fakeRT, with its metrics set.
func newFake(fn func(int, *http.Request) (*http.Response, error), opt Options) (*Client, *fakeRT, *metrics.Set) {
	rt := &fakeRT{fn: fn}
	set := metrics.NewSet()
	opt.BaseURL = "http://target.test:5303"
	opt.HTTP = &http.Client{Transport: rt}
	opt.Metrics = set
	opt.Role = "gateway"
	return New(opt), rt, set
}

// advance lets fake time pass inside a synctest bubble (instant in real time).
func advance(d time.Duration) { <-time.After(d) }

func metricValue(t *testing.T, set *metrics.Set, name string) float64 {
	t.Helper()
	var b bytes.Buffer
	set.WritePrometheus(&b)
	for line := range strings.SplitSeq(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("metric %s not found in:\n%s", name, b.String())
	return 0
}
