package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Limits of TestGatewayStorageFailure (docs/gateway.md §3.8).
const (
	// gwBreakerOpenLimit bounds the wait for the storage breaker to open:
	// five failed attempts in a row trip it, and every read makes up to
	// three.
	gwBreakerOpenLimit = 10 * time.Second
	// gwRecoverLimit bounds restart → reads succeed again: the breaker's
	// open time (breaker_open_timeout, 5 s) and a half-open probe.
	gwRecoverLimit = 15 * time.Second
	// gwAnswerSlack is what an answer may take beyond forward_timeout.
	gwAnswerSlack = time.Second
)

// TestGatewayStorageFailure: in the three-process wiring the storage
// process is killed with SIGKILL. Reads of an object only it holds answer
// 502 or 503 with an envelope within forward_timeout, and carry
// Retry-After once the breaker is open; an object a second storage node
// also holds (announced to the same index) is still served, from that
// provider. After a restart of the storage process on its data dir and
// ports, reads succeed again.
func TestGatewayStorageFailure(t *testing.T) {
	t.Parallel()
	w := startThreeProcesses(t, gwTestConfig)
	st2 := startStorageFor(t, w.ix)
	only, both := randomBytes(101, 100_000), randomBytes(102, 100_000)
	onlyID := w.st.post(w.st.token("storage:write"), only).CID
	bothID := w.st.post(w.st.token("storage:write"), both).CID
	st2.post(st2.token("storage:write"), both)
	waitProviderAt(t, w.ix, bothID, st2)
	for _, id := range []string{onlyID, bothID} {
		if a := w.mustGet(t, "/o/"+id, nil); a.status != http.StatusOK {
			t.Fatalf("GET /o/%s before the kill: %s, want 200", id, a.describe())
		}
	}

	w.st.kill9()
	t.Logf("first read after the kill: %s", w.failedRead(t, onlyID).describe())
	if a := w.mustGet(t, "/o/"+bothID, nil); a.status != http.StatusOK || !bytes.Equal(a.body, both) {
		t.Errorf("read of an object the index's other provider holds: %s, want 200 and its bytes", a.describe())
	}
	var open gwAnswer
	poll(t, gwBreakerOpenLimit, "an answer with Retry-After (storage breaker open)", func() bool {
		open = w.failedRead(t, onlyID)
		return open.header.Get("Retry-After") != ""
	})
	t.Logf("breaker open: %s", open.describe())
	if s, err := strconv.Atoi(open.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("breaker-open answer: Retry-After %q, want an integer ≥ 1", open.header.Get("Retry-After"))
	}
	if a := w.mustGet(t, "/o/"+bothID, nil); a.status != http.StatusOK || !bytes.Equal(a.body, both) {
		t.Errorf("provider read while the storage breaker is open: %s, want 200 and its bytes", a.describe())
	}

	w.st = w.st.restart()
	restarted := time.Now()
	var back gwAnswer
	ok := pollUntilEvery(gwRecoverLimit, gwPollEvery, func() bool {
		back = w.mustGet(t, "/o/"+onlyID, nil)
		return back.status == http.StatusOK
	})
	if !ok {
		t.Fatalf("reads still fail %s after the storage restarted: last %s", gwRecoverLimit, back.describe())
	}
	t.Logf("reads succeed again %s after the storage was ready", time.Since(restarted).Round(time.Millisecond))
	if !bytes.Equal(back.body, only) {
		t.Errorf("read after the restart: %d bytes differ from the %d stored", len(back.body), len(only))
	}
}

// failedRead reads id through w's gateway while its storage is down: the
// answer must come within forward_timeout (plus slack) as a 502 or 503
// upstream_unavailable envelope, a 503 with Retry-After.
func (w gwWiring) failedRead(t *testing.T, id string) gwAnswer {
	t.Helper()
	a := w.gwGet("/o/"+id, nil)
	what := fmt.Sprintf("GET /o/%s with the storage down", id)
	if a.err != nil || a.httpResult.err != nil {
		t.Fatalf("%s: %s (body error %v): the gateway must answer within %s", what, a.describe(), a.httpResult.err, gwRequestLimit)
	}
	if a.took > gwForwardTimeout+gwAnswerSlack {
		t.Errorf("%s took %s, more than forward_timeout %s", what, a.took.Round(time.Millisecond), gwForwardTimeout)
	}
	if a.status != http.StatusBadGateway && a.status != http.StatusServiceUnavailable {
		t.Fatalf("%s: %s, want 502 or 503", what, a.describe())
	}
	env, ok := envelopeOf(a.body)
	if !ok || env.Error.Code != "upstream_unavailable" {
		t.Fatalf("%s: body %q, want an upstream_unavailable error envelope", what, a.body)
	}
	if a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") == "" {
		t.Errorf("%s: 503 without Retry-After", what)
	}
	return a
}
