package provider

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/store/verified/vfetch"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

func TestBadThenGoodSmallObject(t *testing.T) {
	data := []byte("hello world")
	bad, good := corrupt(data, 4), honest(data)
	badURL, goodURL := start(t, bad), start(t, good)
	f, m := newFetcher(t, Options{})
	c := newClient(t)
	providers := []string{badURL, goodURL}
	url := gateway(t, f, good.id, providers, nil)

	resp, body, err := get(t, c, http.MethodGet, url, nil)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("first read: %d %q %v", resp.StatusCode, body, err)
	}
	h := resp.Header
	if h.Get("ETag") != `"`+good.id.String()+`"` || h.Get("Cache-Control") != content.Immutable || h.Get("Accept-Ranges") != "bytes" ||
		h.Get("Content-Type") != "text/plain; charset=utf-8" || h.Get("Content-Length") != "11" {
		t.Fatalf("headers %v", h)
	}
	if got := metric(m, mismatchSeries); got != 1 {
		t.Fatalf("hash mismatch metric %v", got)
	}
	if got := f.Filter(providers, ""); len(got) != 1 || got[0] != goodURL {
		t.Fatalf("Filter after mismatch = %v", got)
	}
	// The bad provider is skipped next time.
	n := len(bad.requests())
	if resp, body, err := get(t, c, http.MethodGet, url, nil); err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("second read: %d %q %v", resp.StatusCode, body, err)
	}
	if len(bad.requests()) != n {
		t.Fatal("the bad provider was asked again")
	}
}

// Provider requests carry nothing of the client's: no credentials, no
// tenant, no forwarded headers; only what the transfer needs.
func TestProviderRequestHeaders(t *testing.T) {
	data, _ := pattern(3*cs + 5)
	p := honest(data)
	f, _ := newFetcher(t, Options{})
	url := gateway(t, f, p.id, []string{start(t, p)}, nil)
	_, _, err := get(t, newClient(t), http.MethodGet, url, map[string]string{
		"Authorization": "Bearer secret", "Cookie": "a=b", "X-Ron-Tenant": "acme",
		"X-Forwarded-For": "203.0.113.9", "X-Corr-Id": "corr", "Range": "bytes=70000-70010",
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests() // the outboard, the size's proof (the last group), the range
	if len(reqs) != 3 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	for _, r := range reqs {
		for k := range r.Header {
			switch k {
			case "Accept-Encoding", "User-Agent", "Range":
			default:
				t.Errorf("%s %s carried %s", r.Method, r.URL.Path, k)
			}
		}
	}
	if reqs[0].URL.Path != "/o/"+p.id.String()+"/outboard" || reqs[1].Header.Get("Range") != "bytes=196608-196612" ||
		reqs[2].Header.Get("Range") != "bytes=65536-131071" {
		t.Fatalf("requests %s, then Range %q and %q", reqs[0].URL.Path, reqs[1].Header.Get("Range"), reqs[2].Header.Get("Range"))
	}
}

// A large object whose provider sends wrong bytes in group 2: the client
// gets groups 0 and 1, then the connection closes short of Content-Length.
func TestLargeObjectWrongGroupAborts(t *testing.T) {
	data, id := pattern(3*cs + 1000)
	bad := corrupt(data, 2*cs+17)
	good := honest(data)
	badURL, goodURL := start(t, bad), start(t, good)
	f, m := newFetcher(t, Options{})
	url := gateway(t, f, id, []string{badURL, goodURL}, nil)
	resp, body, err := get(t, newClient(t), http.MethodGet, url, nil)
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(data)) {
		t.Fatalf("status %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(body, data[:2*cs]) {
		t.Fatalf("body %d bytes (want the first two groups), err %v", len(body), err)
	}
	if metric(m, mismatchSeries) != 1 || len(f.Filter([]string{badURL, goodURL}, "")) != 1 {
		t.Fatal("the provider was not marked bad")
	}
	if len(good.requests()) != 0 {
		t.Fatal("a second provider was tried after the first byte")
	}
	// The next read goes to the good provider.
	if resp, body, err := get(t, newClient(t), http.MethodGet, url, nil); err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("next read: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
}

// The lying sources of every reader's table (docs/storage.md §4), read
// whole and in ranges on and off group boundaries: the client receives
// only the object's own bytes — at most the range's bytes before the first
// bad group it covers — then a cut connection (bytes still buffered when
// it is cut never arrive), or a clean 502 when the first group it needs is
// bad, or when the range ends before a bad last group (the size's proof
// fails); a complete answer only when the range and the last group are
// good.
func TestLiars(t *testing.T) {
	data, _ := pattern(5*cs + 1234)
	size := int64(len(data))
	c := newClient(t)
	for _, l := range vfetchtest.Liars(data) {
		t.Run(l.Name, func(t *testing.T) {
			pURL := start(t, serving(l.Object))
			for i, r := range append(vfetchtest.Ranges(size), vfetchtest.Range{Start: 0, End: size - 1}) {
				f, _ := newFetcher(t, Options{HTTP: c}) // no bad mark from the previous range
				url := gateway(t, f, l.ID, []string{pURL}, nil)
				rng := r.Header()
				if i == len(vfetchtest.Ranges(size)) {
					rng = "" // the whole object, no Range: 200
				}
				status, body, err := tryGet(c, url, rng)
				want, complete := l.DeliversProven(data, r.Start, r.End)
				switch {
				case len(want) == 0 && !complete:
					if status != http.StatusBadGateway || envelope(t, status, body).Code != httpx.CodeUpstreamUnavailable {
						t.Fatalf("%s: %d %.200s, want a clean 502", r.Header(), status, body)
					}
				case complete && (err != nil || status/100 != 2 || !bytes.Equal(body, want)):
					t.Fatalf("%s: %d, %d bytes, %v; want the range", r.Header(), status, len(body), err)
				case !complete && (err == nil || !bytes.HasPrefix(want, body)):
					t.Fatalf("%s: %d, %d bytes, %v; want at most the range's first %d bytes, cut", r.Header(), status, len(body), err, len(want))
				}
			}
		})
	}
}

// tryGet GETs url with a Range header (none when ""): the status (0 when the connection
// was cut before the headers), the body received and the request's or the
// body's error.
func tryGet(c *http.Client, url, rng string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// A provider running a ron from before verified streaming (404 on
// /outboard, 200 on HEAD) is passed over for the next one: a breaker
// failure, not a bad mark.
func TestV1ProviderPassedOver(t *testing.T) {
	data, id := pattern(2*cs + 5)
	old, good := serving(vfetchtest.V1(data)), honest(data)
	oldURL := start(t, old)
	f, m := newFetcher(t, Options{})
	resp, body, err := get(t, newClient(t), http.MethodGet, gateway(t, f, id, []string{oldURL, start(t, good)}, nil), nil)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("%d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	if c := f.health.breakerFor(oldURL).Counts(); c.TotalFailures != 1 || len(f.Filter([]string{oldURL}, "")) != 1 || metric(m, mismatchSeries) != 0 {
		t.Fatalf("old provider: %+v, filtered %v", c, f.Filter([]string{oldURL}, ""))
	}
	for _, r := range old.requests() {
		if r.Method == http.MethodGet && r.URL.Path == "/o/"+id.String() {
			t.Fatal("the old provider's unverifiable body was read")
		}
	}
}

// A one-chunk object is fully verified before the headers: a lying
// provider yields 502 hash_mismatch and nothing else.
func TestSmallWholeMismatchIs502(t *testing.T) {
	data := []byte("0123456789abcdef")
	p := selfConsistent(data, 3)
	f, _ := newFetcher(t, Options{})
	url := gateway(t, f, p.id, []string{start(t, p)}, nil)
	resp, body, _ := get(t, newClient(t), http.MethodGet, url, nil)
	e := envelope(t, resp.StatusCode, body)
	if resp.StatusCode != http.StatusBadGateway || e.Code != httpx.CodeUpstreamUnavailable || e.Details["reason"] != "hash_mismatch" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestSingleRange(t *testing.T) {
	data, id := pattern(3*cs + 1000) // 4 chunks
	size := len(data)
	for _, tc := range []struct {
		name, rng     string
		start, end    int // expected bytes [start, end]
		providerRange string
	}{ // ranges ending before the last chunk prove the size first: "bytes=196608-197607"
		{"chunk boundaries", "bytes=65536-131071", cs, 2*cs - 1, "bytes=65536-131071"},
		{"inside a chunk", "bytes=100-200", 100, 200, "bytes=0-65535"},
		{"across a boundary", "bytes=65000-70000", 65000, 70000, "bytes=0-131071"},
		{"inside the last chunk", "bytes=196700-196710", 196700, 196710, "bytes=196608-197607"},
		{"suffix", "bytes=-10", size - 10, size - 1, "bytes=196608-197607"},
		{"open ended", "bytes=131072-", 2 * cs, size - 1, "bytes=131072-197607"},
		{"clipped end", "bytes=196000-999999", 196000, size - 1, "bytes=131072-197607"},
		{"whole object", "bytes=0-", 0, size - 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := honest(data)
			f, _ := newFetcher(t, Options{})
			url := gateway(t, f, id, []string{start(t, p)}, nil)
			resp, body, err := get(t, newClient(t), http.MethodGet, url, map[string]string{"Range": tc.rng})
			if err != nil || resp.StatusCode != http.StatusPartialContent {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			wantCR := "bytes " + strconv.Itoa(tc.start) + "-" + strconv.Itoa(tc.end) + "/" + strconv.Itoa(size)
			if resp.Header.Get("Content-Range") != wantCR || !bytes.Equal(body, data[tc.start:tc.end+1]) {
				t.Fatalf("Content-Range %q (want %q), %d bytes", resp.Header.Get("Content-Range"), wantCR, len(body))
			}
			reqs := p.requests()
			if got := reqs[len(reqs)-1].Header.Get("Range"); got != tc.providerRange {
				t.Fatalf("provider Range %q, want %q", got, tc.providerRange)
			}
			proof := tc.end < 3*cs
			if len(reqs) != 2 && !proof || proof && (len(reqs) != 3 || reqs[1].Header.Get("Range") != "bytes=196608-197607") {
				t.Fatalf("%d provider requests (a proof: %v)", len(reqs), proof)
			}
		})
	}
}

func TestRangeEdgeCases(t *testing.T) {
	data, id := pattern(2*cs + 10)
	p := honest(data)
	f, _ := newFetcher(t, Options{})
	pURL := start(t, p)
	url := gateway(t, f, id, []string{pURL}, nil)
	c := newClient(t)
	etag := `"` + id.String() + `"`

	// Several ranges → 200 with the full body; the provider is asked for all.
	resp, body, err := get(t, c, http.MethodGet, url, map[string]string{"Range": "bytes=0-1,100-200"})
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) || p.requests()[1].Header.Get("Range") != "" {
		t.Fatalf("multi-range: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	// Unsatisfiable → 416 with bytes */N.
	resp, body, _ = get(t, c, http.MethodGet, url, map[string]string{"Range": "bytes=999999-"})
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || resp.Header.Get("Content-Range") != "bytes */131082" ||
		envelope(t, resp.StatusCode, body).Code != httpx.CodeRangeNotSatisfiable {
		t.Fatalf("416: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Range"), body)
	}
	// If-Range with another tag → the range is ignored.
	resp, body, _ = get(t, c, http.MethodGet, url, map[string]string{"Range": "bytes=0-9", "If-Range": `"other"`})
	if resp.StatusCode != 200 || len(body) != len(data) {
		t.Fatalf("If-Range other: %d, %d bytes", resp.StatusCode, len(body))
	}
	// If-Range with the ETag → 206.
	resp, body, _ = get(t, c, http.MethodGet, url, map[string]string{"Range": "bytes=0-9", "If-Range": etag})
	if resp.StatusCode != 206 || !bytes.Equal(body, data[:10]) {
		t.Fatalf("If-Range match: %d, %d bytes", resp.StatusCode, len(body))
	}
	// If-None-Match → 304; If-Match another tag → 412.
	resp, _, _ = get(t, c, http.MethodGet, url, map[string]string{"If-None-Match": etag})
	if resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != content.Immutable {
		t.Fatalf("304: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body, _ = get(t, c, http.MethodGet, url, map[string]string{"If-Match": `"nope"`})
	if resp.StatusCode != http.StatusPreconditionFailed || envelope(t, resp.StatusCode, body).Code != httpx.CodePreconditionFailed {
		t.Fatalf("412: %d %s", resp.StatusCode, body)
	}
}

func TestEmptyObject(t *testing.T) {
	p := honest(nil)
	f, _ := newFetcher(t, Options{})
	url := gateway(t, f, p.id, []string{start(t, p)}, nil)
	resp, body, err := get(t, newClient(t), http.MethodGet, url, map[string]string{"Range": "bytes=-5"})
	if err != nil || resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != "0" {
		t.Fatalf("%d %q %v %v", resp.StatusCode, body, err, resp.Header)
	}
}

func TestSetOverridesHeaders(t *testing.T) {
	data, id := pattern(100)
	p := honest(data)
	p.ctype = "not a media type;;"
	f, _ := newFetcher(t, Options{})
	pURL := start(t, p)
	// Without set: an unusable provider type becomes octet-stream.
	resp, _, _ := get(t, newClient(t), http.MethodGet, gateway(t, f, id, []string{pURL}, nil), nil)
	if resp.Header.Get("Content-Type") != vfetch.OctetStream {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	set := http.Header{"Content-Type": {"text/html"}, "Cache-Control": {"public, max-age=0, must-revalidate"}}
	url := gateway(t, f, id, []string{pURL}, set)
	resp, body, err := get(t, newClient(t), http.MethodGet, url, nil)
	if err != nil || !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "text/html" ||
		resp.Header.Get("Cache-Control") != "public, max-age=0, must-revalidate" {
		t.Fatalf("%v %v", err, resp.Header)
	}
}

func TestHeadViaProvider(t *testing.T) {
	data, id := pattern(5000)
	missing, p := honest(data), honest(data)
	missing.bodyStatus = http.StatusNotFound
	p.ctype = "image/png"
	f, _ := newFetcher(t, Options{})
	url := gateway(t, f, id, []string{start(t, missing), start(t, p)}, nil)
	c := newClient(t)
	resp, body, err := get(t, c, http.MethodHead, url, map[string]string{"Range": "bytes=0-1"})
	if err != nil || resp.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	h := resp.Header
	if h.Get("Content-Length") != "5000" || h.Get("Content-Type") != "image/png" || h.Get("ETag") != `"`+id.String()+`"` ||
		h.Get("Cache-Control") != content.Immutable || h.Get("Content-Range") != "" {
		t.Fatalf("headers %v", h)
	}
	for _, r := range p.requests() {
		if r.Method != http.MethodHead || r.Header.Get("Range") != "" {
			t.Fatalf("provider got %s Range %q", r.Method, r.Header.Get("Range"))
		}
	}
	resp, _, _ = get(t, c, http.MethodHead, url, map[string]string{"If-None-Match": `W/"` + id.String() + `"`})
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("HEAD If-None-Match: %d", resp.StatusCode)
	}
	// A 404 is not a breaker failure and no bad mark.
	if len(f.Filter([]string{start(t, missing)}, "")) != 1 || f.health.worstState() != "closed" {
		t.Fatal("a 404 marked the provider")
	}
}

func TestAllFailing(t *testing.T) {
	data, id := pattern(1000)
	gone, broken, framing := honest(data), honest(data), honest(data)
	gone.outboardStatus, gone.bodyStatus = http.StatusNotFound, http.StatusNotFound
	broken.outboardStatus = http.StatusInternalServerError
	framing.bodyStatus = http.StatusTeapot
	f, m := newFetcher(t, Options{MaxProviders: 5})
	providers := []string{start(t, gone), start(t, broken), start(t, framing)}
	for _, tc := range []struct {
		name      string
		providers []string
		reason    string
	}{
		{"none", nil, "no_provider"},
		{"all failing", providers, "no_provider"},
		{"one mismatching", append([]string{start(t, corrupt(data, 1))}, providers...), "hash_mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, _ := get(t, newClient(t), http.MethodGet, gateway(t, f, id, tc.providers, nil), nil)
			e := envelope(t, resp.StatusCode, body)
			if resp.StatusCode != http.StatusBadGateway || e.Code != httpx.CodeUpstreamUnavailable || e.Details["reason"] != tc.reason {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	}
	if metric(m, requestsSeries("404")) < 1 || metric(m, requestsSeries("500")) < 1 || metric(m, requestsSeries("418")) < 1 {
		t.Fatalf("request metrics %v", m.Values())
	}
}

func TestConnectionRefusedAndIgnoredRange(t *testing.T) {
	data, id := pattern(2*cs + 1)
	goodURL := start(t, honest(data))
	closed := newClosedURL(t) // connection refused
	rangeless := honest(data)
	rangeless.ignoreRange = true
	f, m := newFetcher(t, Options{})
	url := gateway(t, f, id, []string{closed, start(t, rangeless), goodURL}, nil)
	resp, body, err := get(t, newClient(t), http.MethodGet, url, map[string]string{"Range": "bytes=70000-70009"})
	if err != nil || resp.StatusCode != 206 || !bytes.Equal(body, data[70000:70010]) {
		t.Fatalf("%d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	if metric(m, requestsSeries(vfetch.CodeError)) != 1 {
		t.Fatalf("error requests %v", metric(m, requestsSeries(vfetch.CodeError)))
	}
}

// newClosedURL returns the URL of a server that is no longer listening.
func newClosedURL(t *testing.T) string {
	srv := httptestServer(t)
	u := srv.URL
	srv.Close()
	return u
}

// Redirects are not followed: a provider cannot point the gateway elsewhere.
func TestRedirectNotFollowed(t *testing.T) {
	data, id := pattern(100)
	target := honest(data)
	targetURL := start(t, target)
	redirector := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, targetURL+r.URL.Path, http.StatusFound)
	}))
	f, m := newFetcher(t, Options{})
	resp, body, _ := get(t, newClient(t), http.MethodGet, gateway(t, f, id, []string{redirector}, nil), nil)
	if resp.StatusCode != http.StatusBadGateway || len(target.requests()) != 0 || metric(m, requestsSeries("302")) != 1 {
		t.Fatalf("%d %s; target asked %d times", resp.StatusCode, body, len(target.requests()))
	}
}
