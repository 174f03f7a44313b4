package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/internal/tooltest"
)

// Limits of the browser test. Waits poll the DOM; none sleeps.
const (
	browserSessionLimit = time.Minute      // the whole browser session
	browserWaitLimit    = 15 * time.Second // one rendered state (the page polls every 2 s)
	browserStepLimit    = 10 * time.Second // one browser command
	browserPollEvery    = 50 * time.Millisecond
)

// cannedStatus is a clustered node whose storage is degraded, with repair
// progress, and no gateway role: the parts of the page a single-node e2e
// run never shows.
const cannedStatus = `{"version":"9.9.9","node_id":"01JNODE","uptime_s":93784,"amnesia":false,"ready":false,
"roles":[
 {"name":"registry","state":"running","ready":true,"degraded":false,"restarts":0,"listen":"127.0.0.1:9444","last_error":"",
  "details":{"head":42,"verified_through":42,"checkpoint_size":43,"open_proposals":1,"write_ready":true,"origin":"ron-registry/x"}},
 {"name":"storage","state":"running","ready":true,"degraded":true,"restarts":7,"listen":"127.0.0.1:5303","last_error":"disk: <b>low</b>",
  "details":{"engine":"fs","objects":1234,"bytes":1073741824,"free_bytes":3221225472,"quarantined":2,
   "repair":{"state":"running","pass":3,"under_replicated":5},
   "sidecar_upgrade":{"state":"running","objects":1234,"scanned":600,"upgraded":598,"corrupt":1}}}],
"queues":[{"role":"storage","queue":"work","depth":512,"capacity":512,"dropped":9}],
"cluster":{"node_id":"01JNODE","zone":"a","members":[
 {"id":"01JNODE","state":"alive","roles":["storage","registry"],"zone":"a","since":"2026-01-01T00:00:00Z"},
 {"id":"01JPEER","state":"dead","roles":["storage"],"zone":"b","since":"2026-01-02T00:00:00Z"}]}}`

const cannedReadyz = `{"ready":false,"degraded":["storage:disk"]}`

// cannedMetrics: 12 storage requests, p50 in the (0.005, 0.01] bucket.
const cannedMetrics = `ron_http_requests_total{role="storage",route="/o/{b3}",code="200"} 12
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="0.005"} 4
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="0.01"} 8
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="+Inf"} 12
ron_busy_rejections_total{role="storage",endpoint="/o"} 3
`

// fakeAdmin serves the page with canned status, readiness and metrics;
// down makes /api/v1/status fail.
type fakeAdmin struct {
	mu   sync.Mutex
	down bool
}

func (f *fakeAdmin) handler() http.Handler {
	e := echo.New()
	Mount(e)
	e.GET("/api/v1/status", func(c echo.Context) error {
		f.mu.Lock()
		down := f.down
		f.mu.Unlock()
		if down {
			return c.String(http.StatusInternalServerError, "down")
		}
		return c.Blob(http.StatusOK, "application/json", []byte(cannedStatus))
	})
	e.GET("/readyz", func(c echo.Context) error {
		return c.Blob(http.StatusServiceUnavailable, "application/json", []byte(cannedReadyz))
	})
	e.GET("/metrics", func(c echo.Context) error { return c.String(http.StatusOK, cannedMetrics) })
	return e
}

func (f *fakeAdmin) setDown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = true
}

// TestPageRendersCannedStatus loads the page in headless Chromium against
// canned answers and checks the rendering of a degraded role, readiness
// items, a full queue, repair progress, cluster members, latency from
// histogram buckets, an absent role, text that looks like markup, and the
// unreachable state.
func TestPageRendersCannedStatus(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		tooltest.Missing(t, "chromium is not installed (Debian package chromium)")
	}
	f := &fakeAdmin{}
	srv := httptest.NewServer(f.handler())
	defer srv.Close()
	ctx := openBrowser(t, chromium, srv.URL+Prefix)

	waitFor(t, ctx, "the canned status",
		`text('#node-id') === '01JNODE'`, `text('#node-version') === '9.9.9'`, `text('#node-uptime') === '1d 2h'`,
		`text('#node-ready') === 'not ready'`,
		`text('#roles tr[data-key="storage"] td[data-k="health"] .badge') === 'degraded'`,
		`text('#roles tr[data-key="storage"] td[data-k="health"] li') === 'degraded storage:disk'`,
		`cell('roles', 'storage', 'restarts') === '7'`,
		`cell('roles', 'storage', 'error') === 'disk: <b>low</b>'`, `!document.querySelector('#roles b')`,
		`cell('roles', 'registry', 'health') === 'ready'`,
		`cell('queues', 'storage/work', 'depth') === '512 / 512'`, `cell('queues', 'storage/work', 'dropped') === '9'`,
		`document.querySelector('#queues tr[data-key="storage/work"]').classList.contains('attn')`,
		`fact('storage', 'objects') === '1234'`, `fact('storage', 'bytes') === '1.0 GiB'`, `fact('storage', 'repair-under_replicated') === '5'`,
		`fact('storage', 'upgrade-scanned') === '600'`, `fact('storage', 'upgrade-state') === 'running'`,
		`text('#storage .capacity') === '25.0% of 4.0 GiB used'`,
		`fact('registry', 'head') === '42'`,
		`text('#gateway .body') === 'The gateway role is not enabled on this node.'`,
		`!document.getElementById('cluster').hidden`, `cell('cluster', '01JPEER', 'state') === 'dead'`,
		`cell('cluster', '01JNODE', 'roles') === 'storage, registry'`,
		`cell('traffic', 'storage', 'total') === '12'`, `cell('traffic', 'storage', 'p50') === '7.5 ms*'`,
		`cell('rejections', 'ron_busy_rejections_total/storage', 'total') === '3'`,
		`cell('rejections', 'ron_busy_rejections_total/storage', 'top') === '/o 3'`)
	f.setDown()
	waitFor(t, ctx, "the unreachable state", `text('#node-ready') === 'unreachable'`, `!document.getElementById('error').hidden`,
		`text('#error').includes('HTTP 500')`)
}

// openBrowser starts Chromium with a phone-sized viewport and opens url;
// the browser ends with the test.
func openBrowser(t *testing.T, chromium, url string) context.Context {
	t.Helper()
	session, cancelSession := context.WithTimeout(context.Background(), browserSessionLimit)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.WindowSize(375, 812))
	alloc, cancelAlloc := chromedp.NewExecAllocator(session, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to end
		cancelSession()
	})
	// The first Run starts the browser under the session's deadline only.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(375, 812)); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	ctx, cancel := context.WithTimeout(tab, browserStepLimit)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return tab
}

// domHelpers are in scope of every condition: text of a selector, a table
// cell by section, row key and column, a fact by section and key.
const domHelpers = `
const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent.replace(/\s+/g, ' ').trim() : null; };
const cell = (sec, key, k) => text('#' + sec + ' tr[data-key="' + CSS.escape(key) + '"] td[data-k="' + k + '"]');
const fact = (sec, k) => text('#' + sec + ' [data-k="' + k + '"] dd');
`

// waitFor polls the DOM every browserPollEvery until every condition
// holds, failing after browserWaitLimit with the conditions that do not.
func waitFor(t *testing.T, tab context.Context, what string, conds ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWaitLimit+browserStepLimit)
	defer cancel()
	expr := fmt.Sprintf("(() => { %s\n return [%s].every(c => c()); })()", domHelpers, strings.Join(guarded(conds), ",\n"))
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(browserPollEvery), chromedp.WithPollingTimeout(browserWaitLimit)))
	if err == nil {
		return
	}
	var failing []string
	for _, c := range conds {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("(() => { %s\n return (%s)(); })()", domHelpers, guarded([]string{c})[0])))
		if err != nil || !ok {
			failing = append(failing, fmt.Sprintf("%s (%v)", c, err))
		}
	}
	t.Fatalf("waiting up to %s for %s: %v; not met:\n%s", browserWaitLimit, what, err, strings.Join(failing, "\n"))
}

// guarded wraps each condition in a function that is false, not an
// exception, while the element it reads is not rendered yet (an exception
// would end the poll).
func guarded(conds []string) []string {
	out := make([]string, len(conds))
	for i, c := range conds {
		out[i] = fmt.Sprintf("() => { try { return !!(%s); } catch (e) { return false; } }", c)
	}
	return out
}

// TestCannedDocumentsAreJSON keeps the canned answers valid, so a typo
// fails here and not as a puzzling browser timeout.
func TestCannedDocumentsAreJSON(t *testing.T) {
	for name, doc := range map[string]string{"status": cannedStatus, "readyz": cannedReadyz} {
		if !json.Valid([]byte(doc)) {
			t.Errorf("canned %s is not valid JSON", name)
		}
	}
}
