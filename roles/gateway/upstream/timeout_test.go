package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
)

const timeoutsSeries = `ron_io_timeouts_total{role="gateway",op="forward"}`

func TestDeadline504(t *testing.T) {
	cases := []struct {
		name     string
		deadline time.Duration // from now; 0 = default (ForwardTimeout)
		policy   Policy
		elapsed  time.Duration
		calls    int
	}{
		{name: "call deadline", deadline: time.Second, elapsed: time.Second, calls: 1},
		{name: "default deadline", elapsed: 5 * time.Second, calls: 1},
		{name: "shorter forward timeout", policy: Policy{ForwardTimeout: 2 * time.Second}, elapsed: 2 * time.Second, calls: 1},
		{name: "deadline already passed", deadline: -time.Millisecond, elapsed: 0, calls: 0},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := &script{acts: []int{actHang}}
					l := w.link(t, s, Options{Policy: tc.policy})
					c := Call{Method: "GET", Path: "/o/x"}
					if tc.deadline != 0 {
						c.Deadline = time.Now().Add(tc.deadline)
					}
					start := time.Now()
					_, err := l.Do(context.Background(), c)
					var he *httpx.Error
					if !errors.As(err, &he) || he.Status != http.StatusGatewayTimeout || he.Code != httpx.CodeTimeout {
						t.Fatalf("error %v, want 504 timeout", err)
					}
					if time.Since(start) != tc.elapsed || s.count() != tc.calls {
						t.Fatalf("elapsed %v, calls %d; want %v, %d", time.Since(start), s.count(), tc.elapsed, tc.calls)
					}
					if metric(l, timeoutsSeries) != 1 {
						t.Fatalf("timeouts metric %v", metric(l, timeoutsSeries))
					}
					if tc.calls > 0 && metric(l, `ron_gateway_upstream_requests_total{role="gateway",code="error",upstream="storage"}`) != 1 {
						t.Fatalf("attempt not counted: %v", l.met.m.Values())
					}
				})
			})
		}
	}
}

func TestCallerDeadline504(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := inprocLink(t, &script{acts: []int{actHang}}, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := l.Do(ctx, Call{Method: "GET", Path: "/o/x"})
		if he := httpx.AsError(err); he.Status != http.StatusGatewayTimeout {
			t.Fatalf("error %v", err)
		}
	})
}

// trickle writes pieces with pauses between them.
type trickle struct {
	pieces []string
	pause  time.Duration
	hang   bool // block after the pieces until the request ends
}

func (h trickle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	for i, p := range h.pieces {
		if i > 0 && !runtime.Sleep(r.Context(), h.pause) {
			return
		}
		_, _ = io.WriteString(w, p)
		w.(http.Flusher).Flush()
	}
	if h.hang {
		<-r.Context().Done()
	}
}

func TestBodyProgress(t *testing.T) {
	cases := []struct {
		name    string
		h       trickle
		stream  bool
		body    string
		stalled bool
		elapsed time.Duration
	}{
		{name: "steady body outlives the deadline", h: trickle{pieces: []string{"a", "b", "c"}, pause: 4 * time.Second},
			body: "abc", elapsed: 8 * time.Second},
		{name: "stalled body", h: trickle{pieces: []string{"a"}, hang: true}, body: "a", stalled: true, elapsed: 5 * time.Second},
		{name: "slow piece", h: trickle{pieces: []string{"a", "b"}, pause: 6 * time.Second}, body: "a", stalled: true, elapsed: 5 * time.Second},
		{name: "stream has no progress limit", h: trickle{pieces: []string{"a", "b"}, pause: time.Minute},
			stream: true, body: "ab", elapsed: time.Minute},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := w.link(t, tc.h, Options{})
					resp, err := l.Do(context.Background(), Call{Method: "GET", Path: "/registry/stream", Stream: tc.stream})
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					start := time.Now()
					b, err := io.ReadAll(resp.Body)
					if string(b) != tc.body || errors.Is(err, ErrStalled) != tc.stalled || (err != nil) != tc.stalled {
						t.Fatalf("body %q err %v; want %q stalled %v", b, err, tc.body, tc.stalled)
					}
					if time.Since(start) != tc.elapsed {
						t.Fatalf("elapsed %v, want %v", time.Since(start), tc.elapsed)
					}
					want := 0.0
					if tc.stalled {
						want = 1
						if _, err := resp.Body.Read(make([]byte, 1)); !errors.Is(err, ErrStalled) {
							t.Fatalf("read after stall: %v", err)
						}
					}
					if metric(l, timeoutsSeries) != want {
						t.Fatalf("timeouts metric %v, want %v", metric(l, timeoutsSeries), want)
					}
				})
			})
		}
	}
}

// slowReader is a client body: each piece arrives after pause.
type slowReader struct {
	pieces []string
	pause  time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	if r.pieces[0] == "" {
		r.pieces = r.pieces[1:]
	}
	return n, nil
}

// upload reads the request body; with stopAfter > 0 it reads that many bytes
// and then pauses for 10 minutes.
type upload struct {
	stopAfter int64
	think     time.Duration // pause after the body, before answering
}

func (u upload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.stopAfter > 0 {
		// Stop reading for a long while; a server learns that its client left
		// only by reading again.
		_, _ = io.CopyN(io.Discard, r.Body, u.stopAfter)
		if runtime.Sleep(r.Context(), 10*time.Minute) {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil || !runtime.Sleep(r.Context(), u.think) {
		return
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, strings.Repeat("k", int(n%7)))
}

func TestUploadDeadlines(t *testing.T) {
	cases := []struct {
		name     string
		h        upload
		body     func() io.Reader
		length   int64
		deadline time.Duration
		status   int
		elapsed  time.Duration
	}{
		{name: "slow client upload outlives the deadline", h: upload{},
			body:   func() io.Reader { return &slowReader{pieces: strings.Split("abcdefgh", ""), pause: time.Second} },
			length: 8, status: 201, elapsed: 8 * time.Second},
		{name: "unknown length slow upload", h: upload{},
			body:   func() io.Reader { return &slowReader{pieces: strings.Split("abcdefgh", ""), pause: time.Second} },
			length: -1, status: 201, elapsed: 8 * time.Second},
		{name: "answer after a late body end gets forward timeout", h: upload{think: 4 * time.Second},
			body:   func() io.Reader { return &slowReader{pieces: strings.Split("abcdefgh", ""), pause: time.Second} },
			length: 8, status: 201, elapsed: 12 * time.Second},
		{name: "answer too late after the body", h: upload{think: 6 * time.Second},
			body:   func() io.Reader { return &slowReader{pieces: strings.Split("abcdefgh", ""), pause: time.Second} },
			length: 8, status: 504, elapsed: 13 * time.Second},
		{name: "small body keeps the request deadline", h: upload{think: 2 * time.Second},
			body: func() io.Reader { return strings.NewReader(`{"a":1}`) }, length: 7, deadline: time.Second,
			status: 504, elapsed: time.Second},
		{name: "upstream stops reading", h: upload{stopAfter: 1},
			body: func() io.Reader { return strings.NewReader(strings.Repeat("z", 1<<20)) }, length: 1 << 20,
			status: 504, elapsed: 5 * time.Second},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := w.link(t, tc.h, Options{})
					c := Call{Method: "POST", Path: "/o", Body: tc.body(), ContentLength: tc.length}
					if tc.deadline > 0 {
						c.Deadline = time.Now().Add(tc.deadline)
					}
					start := time.Now()
					resp, err := l.Do(context.Background(), c)
					status := httpx.AsError(err).Status
					if err == nil {
						status = resp.StatusCode
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					if status != tc.status || time.Since(start) != tc.elapsed {
						t.Fatalf("status %d (%v), elapsed %v; want %d, %v", status, err, time.Since(start), tc.status, tc.elapsed)
					}
				})
			})
		}
	}
}
