package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseFrame is one registry.update event frame.
func sseFrame(v string) string {
	return "id: " + v + "\nevent: registry.update\ndata: {\"version\":" + v + "}\n\n"
}

// retryFrame is the frame the registry opens every stream with.
const retryFrame = "retry: 2000\n\n"

// serveSSE answers as the registry's /registry/stream: event-stream headers
// and the retry frame at once, then every frame sent on events, flushed,
// until the request ends. Requests without X-Ron-Tenant are the gateway's
// own tenant follower, not relayed clients: they get 503.
func serveSSE(events <-chan string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("X-Ron-Tenant") == "" {
			status(http.StatusServiceUnavailable, "not_ready")(w, r, nil)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, retryFrame)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		for {
			select {
			case ev := <-events:
				_, _ = io.WriteString(w, ev)
				_ = rc.Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
}

// relayed returns the requests a registry stub received from relayed
// clients (not from the gateway's tenant follower).
func relayed(s *stub) []seen {
	var out []seen
	for _, r := range s.requests() {
		if r.header.Get("X-Ron-Tenant") != "" {
			out = append(out, r)
		}
	}
	return out
}

// stream is an open response read frame by frame.
type stream struct {
	resp *http.Response
	br   *bufio.Reader
}

// open sends a GET whose answer is read incrementally; the request ends
// after testWait or at the end of the test.
func (h *harness) open(path string, kv ...string) stream {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	h.t.Cleanup(cancel)
	resp, err := h.hc.Do(h.req("GET", path, nil, kv...).WithContext(ctx))
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	return stream{resp: resp, br: bufio.NewReader(resp.Body)}
}

// frame reads one SSE frame (through its blank line).
func (s stream) frame() (string, error) {
	var b strings.Builder
	for {
		line, err := s.br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String(), err
		}
		if line == "\n" {
			return b.String(), nil
		}
	}
}

// startStreams is a gateway whose registry is an SSE stub fed by events,
// co-located or over HTTP.
func startStreams(t *testing.T, inProcess bool, maxStreams int) (*harness, *stub, chan string) {
	events := make(chan string)
	reg := newStub(serveSSE(events))
	cfg := baseConfig()
	cfg.StorageURL = newStub(nil).listen(t)
	cfg.MaxStreams = maxStreams
	var loc Locals
	if inProcess {
		loc.Registry = reg.handler()
	} else {
		cfg.RegistryURL = reg.listen(t)
	}
	return startGateway(t, cfg, loc), reg, events
}

// TestRegistryStreamRelay (docs/gateway.md §3.8): events are relayed as they come with
// Last-Event-ID passed on, the scheduler slot is given back once the
// headers arrived, a stream over max_streams is 429 busy, and open streams
// end when the role drains.
func TestRegistryStreamRelay(t *testing.T) {
	for _, inProcess := range []bool{true, false} {
		t.Run(map[bool]string{true: "in-process", false: "http"}[inProcess], func(t *testing.T) {
			testStreamRelay(t, inProcess)
		})
	}
}

func testStreamRelay(t *testing.T, inProcess bool) {
	h, reg, events := startStreams(t, inProcess, 1)
	s := h.open("/registry/stream", "Last-Event-ID", "7")
	if s.resp.StatusCode != http.StatusOK || s.resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %v", s.resp.StatusCode, s.resp.Header)
	}
	if got := relayed(reg)[0].header.Get("Last-Event-ID"); got != "7" {
		t.Errorf("registry got Last-Event-ID %q, want 7", got)
	}
	if got, err := s.frame(); got != retryFrame || err != nil {
		t.Fatalf("first frame %q (%v), want the registry's retry frame", got, err)
	}
	for _, v := range []string{"8", "9"} {
		events <- sseFrame(v)
		if got, err := s.frame(); got != sseFrame(v) || err != nil {
			t.Fatalf("relayed frame %q (%v), want %q", got, err, sseFrame(v))
		}
	}
	eventually(t, "the stream's scheduler slot given back", func() bool {
		return h.r.sched.InFlight() == 0 && h.metric("gateway_inflight") == 0
	})
	if got := h.metric("tasks_spawned_total", "kind", "stream"); got != 1 {
		t.Errorf(`ron_tasks_spawned_total{kind="stream"} = %v, want 1`, got)
	}

	a := h.do("GET", "/registry/stream", nil)
	wantLimit(t, "stream over max_streams", a, 429, "busy", "limit", "max_streams", 0)
	if n := len(relayed(reg)); n != 1 {
		t.Errorf("registry received %d stream requests, want 1", n)
	}

	h.r.Drain()
	if got, err := s.frame(); err != io.EOF {
		t.Fatalf("stream after Drain: read %q, %v; want the stream ended (EOF)", got, err)
	}
}
