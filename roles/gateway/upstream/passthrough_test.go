package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ronhq/ron/httpx"
)

// seen is what a pass-through case observed at the caller.
type seen struct {
	status  int
	headers map[string][]string
	body    string
}

var passHeaders = []string{"Content-Type", "Etag", "Set-Cookie", "Content-Range", "Retry-After", "X-Corr-Id", "Cache-Control"}

func passThroughHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("ETag", `"b3:ab"`)
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Set("Content-Length", "11")
		_, _ = io.WriteString(w, "hello world")
	})
	mux.HandleFunc("HEAD /ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "11")
	})
	mux.HandleFunc("GET /range", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Range", "bytes 0-4/11")
		w.WriteHeader(http.StatusPartialContent)
		_, _ = io.WriteString(w, "hello")
	})
	mux.HandleFunc("GET /cached", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"b3:ab"`)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("GET /missing", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "corr-1", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such object"))
	})
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "corr-2", httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "busy").WithRetryAfter(3))
	})
	mux.HandleFunc("GET /broken", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "corr-3", httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "internal error"))
	})
	mux.HandleFunc("POST /o", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			httpx.WriteError(w, "", httpx.NewError(http.StatusBadRequest, httpx.CodeMalformed, "%v", err))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "got "+string(b))
	})
	mux.HandleFunc("PUT /names/{name}", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "corr-4", httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, "too large"))
	})
	return mux
}

func TestPassThroughSameOnBothWirings(t *testing.T) {
	cases := []struct {
		name   string
		call   func() Call
		status int
		body   string
		header map[string][]string
		code   string // error envelope code, when the body is one
	}{
		{name: "200 with headers", call: func() Call { return Call{Method: "GET", Path: "/ok"} }, status: 200, body: "hello world",
			header: map[string][]string{"Etag": {`"b3:ab"`}, "Set-Cookie": {"a=1", "b=2"}, "Content-Length": {"11"}}},
		{name: "HEAD keeps length", call: func() Call { return Call{Method: "HEAD", Path: "/ok"} }, status: 200,
			header: map[string][]string{"Content-Length": {"11"}}},
		{name: "206", call: func() Call { return Call{Method: "GET", Path: "/range"} }, status: 206, body: "hello",
			header: map[string][]string{"Content-Range": {"bytes 0-4/11"}}},
		{name: "304", call: func() Call { return Call{Method: "GET", Path: "/cached"} }, status: 304,
			header: map[string][]string{"Etag": {`"b3:ab"`}}},
		{name: "404 envelope", call: func() Call { return Call{Method: "GET", Path: "/missing"} }, status: 404, code: httpx.CodeNotFound},
		{name: "429 envelope", call: func() Call { return Call{Method: "GET", Path: "/busy"} }, status: 429, code: httpx.CodeBusy,
			header: map[string][]string{"Retry-After": {"3"}}},
		{name: "500 envelope", call: func() Call { return Call{Method: "GET", Path: "/broken"} }, status: 500, code: httpx.CodeInternal},
		{name: "413 envelope on write", call: func() Call {
			return Call{Method: "PUT", Path: "/names/a", Body: strings.NewReader("{}"), ContentLength: 2}
		},
			status: 413, code: httpx.CodePayloadTooLarge},
		{name: "POST known length", call: func() Call { return Call{Method: "POST", Path: "/o", Body: strings.NewReader("abc"), ContentLength: 3} },
			status: 201, body: "got abc"},
		{name: "POST unknown length", call: func() Call {
			return Call{Method: "POST", Path: "/o", Body: iotest.OneByteReader(strings.NewReader("abcdef")), ContentLength: -1}
		},
			status: 201, body: "got abcdef"},
		{name: "POST empty body", call: func() Call { return Call{Method: "POST", Path: "/o", Body: strings.NewReader(""), ContentLength: 0} },
			status: 201, body: "got "},
	}
	results := map[string]map[string]seen{}
	for _, w := range wirings {
		l := w.link(t, passThroughHandler(), Options{})
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				resp, err := l.Do(context.Background(), tc.call())
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				got := seen{status: resp.StatusCode, headers: map[string][]string{}, body: body(t, resp)}
				for _, k := range passHeaders {
					if v := resp.Header.Values(k); len(v) > 0 {
						got.headers[k] = v
					}
				}
				checkPassThrough(t, got, resp, tc.status, tc.body, tc.code, tc.header)
				if results[tc.name] == nil {
					results[tc.name] = map[string]seen{}
				}
				results[tc.name][w.name] = got
			})
		}
	}
	for name, byWiring := range results {
		a, b := byWiring["http"], byWiring["inproc"]
		if a.status != b.status || a.body != b.body || !sameHeaders(a.headers, b.headers) {
			t.Errorf("%s: wirings differ:\nhttp   %+v\ninproc %+v", name, a, b)
		}
	}
}

func checkPassThrough(t *testing.T, got seen, resp *http.Response, status int, wantBody, code string, header map[string][]string) {
	t.Helper()
	if got.status != status {
		t.Fatalf("status %d, want %d (%s)", got.status, status, got.body)
	}
	for k, want := range header {
		if v := resp.Header.Values(k); !slices.Equal(v, want) {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if code == "" {
		if got.body != wantBody {
			t.Fatalf("body %q, want %q", got.body, wantBody)
		}
		return
	}
	var env httpx.Envelope
	if err := json.Unmarshal([]byte(got.body), &env); err != nil || env.Error == nil || env.Error.Code != code {
		t.Fatalf("envelope %q, want code %s", got.body, code)
	}
}

func sameHeaders(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestRealTCPDedicatedTransport runs one call over a real socket with the
// Link's own transport.
func TestRealTCPDedicatedTransport(t *testing.T) {
	srv := httptest.NewServer(passThroughHandler())
	defer srv.Close()
	l := mustLink(t, Options{Name: "index", BaseURL: srv.URL + "/"})
	defer l.Close()
	if l.InProcess() || l.Name() != "index" {
		t.Fatalf("InProcess %v Name %q", l.InProcess(), l.Name())
	}
	resp, err := l.Do(context.Background(), Call{Method: "GET", Path: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); resp.StatusCode != 200 || got != "hello world" {
		t.Fatalf("%d %q", resp.StatusCode, got)
	}
	if metric(l, `ron_gateway_upstream_requests_total{role="gateway",code="200",upstream="index"}`) != 1 {
		t.Fatalf("metrics: %v", l.met.m.Values())
	}
}
