package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/ronhq/ron/roles/registry/registryapi"
)

// Stream constants of docs/registry.md §2.
const (
	// streamWriteTimeout closes a stream whose one event write blocks longer.
	streamWriteTimeout = 5 * time.Second
	// streamRetry is the reconnection delay announced first (ms).
	streamRetry = "retry: 2000\n\n"
	// endpointStream is the busy_rejections endpoint label of the stream.
	endpointStream = "/registry/stream"
)

// getStream answers GET /registry/stream with text/event-stream: retry
// first, then registry.update events from the cursor Last-Event-ID (or
// ?since=) sets, heartbeats, skips for a lagging subscriber. Above
// stream_max_clients → 429 busy; after Close → 503 draining.
func (a *API) getStream(c echo.Context) error {
	h := a.hub
	if h.isClosed() {
		return errDraining()
	}
	if !h.acquire(a.settings().StreamMaxClients) {
		a.m.busy(endpointStream)
		return errBusy("too many registry streams")
	}
	defer h.release()
	last := streamStart(c.Request())
	hd := c.Response().Header()
	hd.Set("Content-Type", registryapi.MediaTypeSSE)
	hd.Set("Cache-Control", ccNoCache)
	hd.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	if isHead(c) {
		return nil
	}
	out := newHTTPSink(c)
	if err := out.write([]byte(streamRetry)); err != nil {
		a.m.disconnect(reasonOf(c.Request().Context(), err))
		return nil
	}
	h.serve(c.Request().Context(), out, last)
	return nil
}

// streamStart returns the version a request resumes after: Last-Event-ID
// when it is a valid decimal, else ?since= when valid, else nil (fresh).
func streamStart(r *http.Request) *uint64 {
	if v, ok := parseEventID(r.Header.Get("Last-Event-ID")); ok {
		return &v
	}
	if v, ok := parseEventID(r.URL.Query().Get("since")); ok {
		return &v
	}
	return nil
}

// parseEventID accepts 1–20 ASCII digits that fit a uint64.
func parseEventID(s string) (uint64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// httpSink writes SSE frames to a response, each under its own write
// deadline, flushing after every frame.
type httpSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// newHTTPSink returns the sink of c's response and lifts the listener's
// read deadline, which would otherwise cancel a long-lived request.
func newHTTPSink(c echo.Context) *httpSink {
	rc := http.NewResponseController(c.Response().Writer)
	_ = rc.SetReadDeadline(time.Time{})
	return &httpSink{w: c.Response(), rc: rc}
}

// write sends one frame: written and flushed within streamWriteTimeout.
func (s *httpSink) write(p []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := s.w.Write(p); err != nil {
		return &writeError{err: err}
	}
	if err := s.rc.Flush(); err != nil {
		return &writeError{err: err}
	}
	return nil
}

// event writes u as "id: <v>\nevent: registry.update\ndata: {…}\n\n".
func (s *httpSink) event(u registryapi.Update) error {
	return s.write(formatEvent(u))
}

// comment writes ": <text>\n\n".
func (s *httpSink) comment(text string) error {
	return s.write([]byte(": " + text + "\n\n"))
}

// formatEvent renders one SSE event frame.
func formatEvent(u registryapi.Update) []byte {
	data, _ := json.Marshal(u) // strings and an integer: cannot fail
	b := make([]byte, 0, len(data)+64)
	b = append(b, "id: "...)
	b = strconv.AppendUint(b, u.Version, 10)
	b = append(b, "\nevent: "+registryapi.EventUpdate+"\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
