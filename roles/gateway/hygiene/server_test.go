package hygiene

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestFromUpstreamThroughServer checks that the Go server keeps the
// Content-Length FromUpstream leaves on a HEAD answer and the repeated
// Set-Cookie values. (net/http drops Content-Length from every 304 it writes,
// so the 304 rule is covered by TestFromUpstream only.)
func TestFromUpstreamThroughServer(t *testing.T) {
	upstream := http.Header{"Content-Length": {"12"}, "Etag": {`"b3:aa"`}, "Set-Cookie": {"a=1", "b=2"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range FromUpstream(upstream, r.Method, http.StatusOK) {
			w.Header()[k] = vs
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Length") != "12" {
		t.Fatalf("status %d Content-Length %q, want 200 and 12", resp.StatusCode, resp.Header.Get("Content-Length"))
	}
	if got := resp.Header.Values("Set-Cookie"); len(got) != 2 {
		t.Fatalf("Set-Cookie = %v, want both values", got)
	}
}
