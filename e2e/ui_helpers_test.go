package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ronhq/ron/internal/tooltest"
)

// Limits of the browser test. Waits poll the DOM; none sleeps.
const (
	uiSessionLimit = 2 * time.Minute  // the whole browser session
	uiWaitLimit    = 20 * time.Second // one rendered state (the page polls every 2 s)
	uiStepLimit    = 15 * time.Second // one browser command
	uiPollEvery    = 50 * time.Millisecond
)

// uiHelpers are the DOM readers the checks use, defined before each
// expression (DevTools evaluation is not subject to the page's CSP). cell
// reads a table cell of a section by row key and column, fact a value of a
// section's facts, badge the node's readiness badge.
const uiHelpers = `
const cell = (sec, key, k) => {
  const td = document.querySelector('#' + sec + ' tr[data-key="' + CSS.escape(key) + '"] td[data-k="' + k + '"]');
  return td ? td.textContent.replace(/\s+/g, ' ').trim() : null;
};
const fact = (sec, k) => {
  const dd = document.querySelector('#' + sec + ' [data-k="' + k + '"] dd');
  return dd ? dd.textContent.trim() : null;
};
const badge = () => document.getElementById('node-ready').textContent.trim();
`

// uiInit runs in every new document before the page's scripts: it counts
// the tab's page loads and records CSP violations.
const uiInit = `
sessionStorage.setItem('uiTestLoads', String(Number(sessionStorage.getItem('uiTestLoads') || 0) + 1));
window.uiTestCSP = [];
document.addEventListener('securitypolicyviolation', e => window.uiTestCSP.push(e.violatedDirective + ' ' + e.blockedURI));
`

// uiChromium returns the Chromium binary; without one the test fails under
// RON_REQUIRE_TOOLS, else skips.
func uiChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	tooltest.Missing(t, "chromium is not installed (Debian package chromium)")
	return ""
}

// uiArtifactsDir is $RON_ARTIFACTS_DIR (created if needed), else a temp dir
// of the test.
func uiArtifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RON_ARTIFACTS_DIR")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("RON_ARTIFACTS_DIR: %v", err)
	}
	return dir
}

// uiBrowser is one headless Chromium tab showing the page. Its methods are
// called from the test's own goroutine.
type uiBrowser struct {
	t   *testing.T
	ctx context.Context // the tab; ends with the session
}

// uiOpen starts Chromium with a 375×812 viewport, installs uiInit and
// opens url. The browser is closed when the test ends.
func uiOpen(t *testing.T, chromium, url string) *uiBrowser {
	t.Helper()
	session, cancelSession := context.WithTimeout(context.Background(), uiSessionLimit)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.WindowSize(375, 812))
	alloc, cancelAlloc := chromedp.NewExecAllocator(session, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to end
		cancelSession()
	})
	// The first Run starts the browser under the session's deadline only
	// (a shorter one would end the browser with it).
	if err := chromedp.Do(tab, chromedp.EmulateViewport(375, 812, chromedp.EmulatePortrait), uiAddInit); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	b := &uiBrowser{t: t, ctx: tab}
	b.step("open "+url, chromedp.Navigate(url))
	return b
}

// uiAddInit installs uiInit for every document the tab loads.
func uiAddInit(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
	_, err := cdp.Call(ctx, tgt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: uiInit})
	return chromedp.Void{}, err
}

// step runs actions under uiStepLimit.
func (b *uiBrowser) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiStepLimit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// wait polls the DOM every uiPollEvery until the JavaScript condition
// (uiHelpers in scope) holds, failing with the page's text after
// uiWaitLimit.
func (b *uiBrowser) wait(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiWaitLimit+uiStepLimit)
	defer cancel()
	// An exception (an element not rendered yet) counts as false: it
	// would end the poll.
	expr := fmt.Sprintf("(() => { %s\n try { return !!(%s); } catch (e) { return false; } })()", uiHelpers, cond)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(uiPollEvery), chromedp.WithPollingTimeout(uiWaitLimit)))
	if err != nil {
		b.t.Fatalf("waiting up to %s for %s: %v\n---- page text ----\n%s", uiWaitLimit, what, err, b.value(`document.body.innerText`))
	}
}

// eval evaluates a boolean expression (uiHelpers in scope).
func (b *uiBrowser) eval(expr string) bool {
	b.t.Helper()
	return b.number(fmt.Sprintf("(%s) ? 1 : 0", expr)) == 1
}

// number evaluates a numeric expression (uiHelpers in scope).
func (b *uiBrowser) number(expr string) float64 {
	b.t.Helper()
	v := b.value(expr)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		b.t.Fatalf("%s = %q, not a number", expr, v)
	}
	return f
}

// value evaluates an expression (uiHelpers in scope) as a string; an
// evaluation error comes back as text, so diagnostics never stop a test.
func (b *uiBrowser) value(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, uiStepLimit)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("(() => { %s\n return String(%s); })()", uiHelpers, expr)))
	if err != nil {
		return fmt.Sprintf("(evaluate %s: %v)", expr, err)
	}
	return s
}

// screenshots saves full-page PNGs of the phone and the desktop layout as
// <name>-375.png and <name>-1280.png in uiArtifactsDir and logs their paths.
func (b *uiBrowser) screenshots(name string) {
	b.t.Helper()
	dir := uiArtifactsDir(b.t)
	for _, width := range []int64{375, 1280} {
		ctx, cancel := context.WithTimeout(b.ctx, uiStepLimit)
		png, err := uiShoot(ctx, width)
		cancel()
		if err != nil {
			b.t.Errorf("screenshot at %d px: %v", width, err)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
		if err := os.WriteFile(path, png, 0o644); err != nil {
			b.t.Errorf("save screenshot: %v", err)
			continue
		}
		b.t.Logf("screenshot (%d px wide): %s", width, path)
	}
}

// uiShoot sets the viewport width and takes a full-page PNG.
func uiShoot(ctx context.Context, width int64) ([]byte, error) {
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 812)); err != nil {
		return nil, err
	}
	return chromedp.Run(ctx, chromedp.FullScreenshot(100))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
