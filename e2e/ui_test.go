package e2e

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUIStatusPageLive loads the admin listener's status page (/ui/) in
// headless Chromium against a running `ron serve --amnesia` with every
// role, on a phone-sized viewport, and checks what it renders as the node
// changes under it, without a reload: every role running and ready; the
// storage request count and rate after requests; the edge role turning
// not ready (edge:pack:<name> missing) when a broken pack appears. It
// saves screenshots (phone and desktop) to $RON_ARTIFACTS_DIR, else to
// the test's temp dir, and logs their paths.
func TestUIStatusPageLive(t *testing.T) {
	t.Parallel()
	chromium := uiChromium(t)
	packs := t.TempDir()
	n := startNode(t, nodeOpts{args: []string{"--amnesia", "--edge.packs-dir", packs, "--edge.pack-poll-interval", "100ms"}})
	b := uiOpen(t, chromium, "http://"+n.admin+"/ui/")
	defer b.screenshots("ui-status")

	b.wait("every role running and ready", `badge() === 'ready' && ["registry","index","storage","edge","gateway"].every(r =>
		cell('roles', r, 'state') === 'running' && cell('roles', r, 'health') === 'ready')`)
	if !b.eval(`document.documentElement.scrollWidth <= document.documentElement.clientWidth`) {
		t.Errorf("the page scrolls sideways at 375 px: scrollWidth %s", b.value(`document.documentElement.scrollWidth`))
	}
	b.wait("queues, storage, registry and gateway rendered", `cell('queues', 'storage/work', 'dropped') === '0' &&
		fact('storage', 'objects') === '0' && fact('registry', 'head') === '0' && fact('gateway', 'inflight') === '0'`)

	// A counter-driven value: storage requests show in its total and rate.
	before := b.number(`Number(cell('traffic', 'storage', 'total') ?? 0)`)
	const reqs = 25
	for range reqs {
		if r := do(t, http.MethodGet, n.url("/o/"+vectorID), nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("GET /o/%s on an empty node: %d", vectorID, r.status)
		}
	}
	b.wait(fmt.Sprintf("storage total ≥ %v and a request rate > 0", before+reqs),
		fmt.Sprintf(`Number(cell('traffic', 'storage', 'total')) >= %v && Number(cell('traffic', 'storage', 'rate')) > 0`, before+reqs))

	// A role becomes not ready: a broken pack appears in the packs folder.
	edgeReplace(t, filepath.Join(packs, "broken.pmtiles"), []byte("this is not a PMTiles archive"))
	b.wait("edge not ready with edge:pack:broken missing", `badge() === 'not ready' &&
		cell('roles', 'edge', 'health').includes('not ready') && cell('roles', 'edge', 'health').includes('missing edge:pack:broken') &&
		cell('edge', 'broken', 'state') === 'failed' && cell('roles', 'edge', 'error').includes('broken') &&
		["registry","index","storage","gateway"].every(r => cell('roles', r, 'health') === 'ready')`)

	if got := b.value(`sessionStorage.getItem('uiTestLoads')`); got != "1" {
		t.Errorf("the page was loaded %s times, want 1 (it must update without reloading)", got)
	}
	if got := b.value(`JSON.stringify(window.uiTestCSP)`); got != "[]" {
		t.Errorf("Content-Security-Policy violations: %s", got)
	}
}

// TestUIStatusPageAdminToken opens the page from a non-loopback address,
// where /metrics needs an admin token: the page says so and opens the token
// field; a bogus token is reported refused, Clear forgets it, and a real
// token typed there (kept in sessionStorage, sent as a bearer) brings the
// request table in without a reload.
func TestUIStatusPageAdminToken(t *testing.T) {
	t.Parallel()
	chromium := uiChromium(t)
	ip := uiNonLoopbackIP(t)
	p := freePorts(t)
	_, port, err := net.SplitHostPort(p.admin)
	if err != nil {
		t.Fatal(err)
	}
	p.admin = net.JoinHostPort(ip, port)
	n := startNode(t, nodeOpts{ports: p})
	b := uiOpen(t, chromium, "http://"+n.admin+"/ui/")
	defer b.screenshots("ui-token")

	b.wait("the token prompt", `badge() === 'ready' && document.querySelector('#traffic .body').textContent.includes('need an admin token') &&
		document.getElementById('auth').open`)
	b.step("enter a bogus token", chromedp.SendKeys(chromedp.CSS("#token"), "bogus"), chromedp.Click(chromedp.CSS("#token-form button[type=submit]")))
	b.wait("the bogus token refused", `document.querySelector('#traffic .body').textContent.includes('token was refused (HTTP 401)')`)
	b.step("clear the token", chromedp.Click(chromedp.CSS("#token-clear")))
	b.wait("the prompt again", `document.querySelector('#traffic .body').textContent.includes('need an admin token') &&
		sessionStorage.getItem('ron.adminToken') === null && document.getElementById('token').value === ''`)
	tok := n.token("admin")
	b.step("enter the token", chromedp.SendKeys(chromedp.CSS("#token"), tok), chromedp.Click(chromedp.CSS("#token-form button[type=submit]")))
	b.wait("metrics with the token", `cell('traffic', 'admin', 'total') !== null && Number(cell('traffic', 'admin', 'total')) > 0 &&
		cell('rejections', 'ron_edge_rejects_total/edge', 'total') === '0'`)
	if got := b.value(`sessionStorage.getItem('ron.adminToken') === ` + jsString(tok)); got != "true" {
		t.Errorf("the token is not kept in sessionStorage (%s)", got)
	}
	if got := b.value(`sessionStorage.getItem('uiTestLoads')`); got != "1" {
		t.Errorf("the page was loaded %s times, want 1", got)
	}
}

// uiNonLoopbackIP is an IPv4 address of this host other than loopback;
// the test skips on a host without one.
func uiNonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address to reach the admin listener from")
	return ""
}
