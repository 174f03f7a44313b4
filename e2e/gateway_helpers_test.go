package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Limits of the gateway tests (docs/gateway.md §3.8). They bound polls and
// single requests; a healthy run meets each in milliseconds.
const (
	// gwRequestLimit bounds one request to the gateway: forward_timeout
	// (5 s) plus slack. A request still unanswered then counts as hung.
	gwRequestLimit = 8 * time.Second
	// gwForwardTimeout is the gateway's forward_timeout (the default).
	gwForwardTimeout = 5 * time.Second
	// gwPollEvery paces polls that cost a request through the gateway.
	gwPollEvery = 50 * time.Millisecond
)

// gwTestConfig is the [gateway] table of the gateway tests: no anonymous
// rate limit, so that polls never meet a 429.
const gwTestConfig = `[gateway]
anon_rps = 1000000.0
anon_burst = 0
`

// gwWiring is a gateway and the storage and index it forwards to: one
// `ron serve` running every role (gw, st and ix are the same node), or
// three processes (an index, a storage announcing to it, and a gateway with
// --gateway.storage-url and --gateway.index-url).
type gwWiring struct {
	name string
	gw   *node // serves the gateway listener
	st   *node // the gateway's storage
	ix   *node // the gateway's index
}

// startOneProcess starts one `ron serve` with the default roles and the
// [gateway] table cfg.
func startOneProcess(t *testing.T, cfg string) gwWiring {
	t.Helper()
	dir := t.TempDir()
	n := startNode(t, nodeOpts{dataDir: dir, args: []string{"--config", writeConfig(t, dir, cfg)}})
	return gwWiring{name: "one-process", gw: n, st: n, ix: n}
}

// startThreeProcesses starts an index, a storage node announcing to it and
// a gateway forwarding to both over HTTP (the [gateway] table cfg); storage
// and gateway share the index's root key, so the gateway's link tokens and
// the storage's announcements verify.
func startThreeProcesses(t *testing.T, cfg string) gwWiring {
	t.Helper()
	ix := startNode(t, nodeOpts{args: []string{"--roles", "index"}})
	st := startStorageFor(t, ix)
	gwDir := t.TempDir()
	shareRootKey(t, ix, gwDir)
	gw := startNode(t, nodeOpts{dataDir: gwDir, args: []string{"--roles", "gateway", "--config", writeConfig(t, gwDir, cfg),
		"--gateway.storage-url", "http://" + st.storage, "--gateway.index-url", ix.indexURL()}})
	return gwWiring{name: "three-processes", gw: gw, st: st, ix: ix}
}

// startStorageFor starts a storage-only node that shares ix's root key and
// announces its objects to ix.
func startStorageFor(t *testing.T, ix *node) *node {
	t.Helper()
	dir := t.TempDir()
	shareRootKey(t, ix, dir)
	return startNode(t, nodeOpts{dataDir: dir, args: []string{"--roles", "storage", "--storage.index-urls", ix.indexURL()}})
}

// waitProviderAt polls ix's own provider records until st's storage is a
// provider of id (st announced it).
func waitProviderAt(t *testing.T, ix *node, id string, st *node) {
	t.Helper()
	poll(t, announceLimit, fmt.Sprintf("%s to list %s's storage as a provider of %s", ix.name, st.name, id), func() bool {
		for _, p := range ix.localProviders(id) {
			if p.Addr == "http://"+st.storage {
				return true
			}
		}
		return false
	})
}

// gwAnswer is one gateway answer (or the transport error that ended it)
// and how long it took.
type gwAnswer struct {
	httpResult
	took time.Duration
	err  error // transport error or gwRequestLimit passed
}

// gwGet sends GET path to the gateway of w with the headers h, bounded by
// gwRequestLimit; transport errors are returned, not fatal.
func (w gwWiring) gwGet(path string, h http.Header) gwAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), gwRequestLimit)
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.gw.gateway+path, nil)
	if err != nil {
		return gwAnswer{err: err}
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return gwAnswer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(resp.Body)
	return gwAnswer{httpResult: httpResult{status: resp.StatusCode, header: resp.Header, body: body, err: rerr}, took: time.Since(start)}
}

// mustGet is gwGet that fails the test on a transport or body error.
func (w gwWiring) mustGet(t *testing.T, path string, h http.Header) gwAnswer {
	t.Helper()
	a := w.gwGet(path, h)
	if a.err != nil || a.httpResult.err != nil {
		t.Fatalf("%s: GET %s: %v (body: %v) after %s", w.name, path, a.err, a.httpResult.err, a.took.Round(time.Millisecond))
	}
	return a
}

// envelopeOf decodes an error envelope; ok is false when body is none.
func envelopeOf(body []byte) (envelope, bool) {
	var env envelope
	if json.Unmarshal(body, &env) != nil || env.Error.Code == "" || env.Error.CorrID == "" {
		return env, false
	}
	return env, true
}

// describe is a short text of an answer for failure messages.
func (a gwAnswer) describe() string {
	if a.err != nil {
		return fmt.Sprintf("error %v after %s", a.err, a.took.Round(time.Millisecond))
	}
	return fmt.Sprintf("%d (Retry-After %q) %.300s after %s", a.status, a.header.Get("Retry-After"),
		strings.TrimSpace(string(a.body)), a.took.Round(time.Millisecond))
}

// mintTenantToken mints a token for tenant with scopes through n's admin
// API (POST /api/v1/tokens; loopback needs no admin token).
func mintTenantToken(t *testing.T, n *node, tenant string, scopes ...string) string {
	t.Helper()
	return n.gatewayTarget(n.name).Token(t, tenant, scopes...)
}
