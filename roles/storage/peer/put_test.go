package peer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
)

// TestPutReplicaCreated: 201 is a new copy; the request carries the replica
// header, Expect, the exact length and type, the token and every byte; a
// second call reuses the kept-alive connection.
func TestPutReplicaCreated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body, id := payload(200 << 10)
		var got []byte
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			want := map[string]string{HeaderReplica: "1", "Expect": "100-continue", "Content-Type": "image/png",
				"Authorization": "Bearer tok"}
			for k, v := range want {
				if r.Header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, r.Header.Get(k), v)
				}
			}
			if r.Method != http.MethodPut || r.URL.Path != "/o/"+id.String() || r.ContentLength != int64(len(body)) {
				t.Errorf("%s %s length %d", r.Method, r.URL.Path, r.ContentLength)
			}
			got, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"cid":"`+id.String()+`","created":true}`)
		}), Options{Token: staticToken("tok")})
		for range 2 {
			existing, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "image/png", bytes.NewReader(body))
			if err != nil || existing {
				t.Fatalf("existing=%v err=%v", existing, err)
			}
			if !bytes.Equal(got, body) {
				t.Fatalf("server got %d bytes, want %d", len(got), len(body))
			}
		}
		if n := len(f.pl.DialTimes()); n != 1 {
			t.Fatalf("%d dials, want 1 (keep-alive)", n)
		}
	})
}

// TestPutReplicaExistingSendsNothing: a target that already holds the id
// answers 200 at once; no body byte leaves the client or reaches the server.
func TestPutReplicaExistingSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body, id := payload(1 << 20)
		var handlerRead int64
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"created":false}`)
		}), Options{})
		src := &countingReader{r: bytes.NewReader(body)}
		start := time.Now()
		existing, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", src)
		if err != nil || !existing {
			t.Fatalf("existing=%v err=%v", existing, err)
		}
		if src.n != 0 || handlerRead != 0 {
			t.Fatalf("client sent %d body bytes, handler read %d", src.n, handlerRead)
		}
		if n := f.read.Load(); n >= 4<<10 {
			t.Fatalf("server read %d bytes: more than the request head", n)
		}
		if d := time.Since(start); d >= ExpectContinueTimeout {
			t.Fatalf("answer took %v: the client waited for the continue timeout", d)
		}
	})
}

// TestPutReplicaStatuses maps every refusal to its Reason and keeps the
// target's envelope.
func TestPutReplicaStatuses(t *testing.T) {
	cases := []struct {
		status int
		code   string
		reason string
	}{
		{http.StatusInsufficientStorage, httpx.CodeInsufficientStorage, ReasonTargetFull},
		{http.StatusTooManyRequests, httpx.CodeBusy, ReasonBusy},
		{http.StatusServiceUnavailable, httpx.CodeDraining, ReasonUnavailable},
		{http.StatusInternalServerError, httpx.CodeInternal, ReasonUnavailable},
		{http.StatusBadGateway, "", ReasonUnavailable},
		{http.StatusConflict, httpx.CodeHashMismatch, ReasonHashMismatch},
		{http.StatusBadRequest, httpx.CodeBadRequest, ReasonRejected},
		{http.StatusForbidden, httpx.CodeForbidden, ReasonRejected},
		{http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, ReasonRejected},
		{http.StatusMovedPermanently, "", ReasonRejected},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body, id := payload(100 << 10)
				f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.code == "" {
						w.Header().Set("Location", "/elsewhere")
						w.WriteHeader(tc.status)
						return
					}
					httpx.WriteError(w, "", httpx.NewError(tc.status, tc.code, "no"))
				}), Options{})
				src := &countingReader{r: bytes.NewReader(body)}
				_, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", src)
				pe := putErr(t, err, tc.status, tc.reason)
				var he *httpx.Error
				if tc.code != "" && (!errors.As(pe, &he) || he.Code != tc.code || he.Status != tc.status) {
					t.Fatalf("cause %v, want envelope %s", pe.Err, tc.code)
				}
				if src.n != 0 {
					t.Fatalf("sent %d body bytes to a target that refused up front", src.n)
				}
			})
		})
	}
}

// TestPutReplicaStall: a target that stops reading fails the copy exactly
// Stall after the last body byte was taken, counted as a stall.
func TestPutReplicaStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		body, id := payload(1 << 20)
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadFull(r.Body, make([]byte, 10))
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}), Options{Stall: 3 * time.Second})
		t.Cleanup(func() { close(release) })
		src := &stampedReader{r: bytes.NewReader(body)}
		_, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", src)
		pe := putErr(t, err, 0, ReasonStall)
		if d := time.Since(src.last); d != 3*time.Second {
			t.Fatalf("failed %v after the last body read, want 3s (%v)", d, pe)
		}
		if v := f.m.Values()[runtime.MetricName("io_timeouts_total", "role", "storage", "op", "replica_stall")]; v != 1 {
			t.Fatalf("stall counter %v", v)
		}
	})
}

// TestPutReplicaSlowTarget: a target that reads slowly but takes a copy
// buffer (32 KiB) more often than Stall gets the whole object.
func TestPutReplicaSlowTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body, id := payload(256 << 10)
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			buf := make([]byte, 32<<10)
			var n int
			for {
				time.Sleep(2 * time.Second)
				k, err := io.ReadFull(r.Body, buf)
				n += k
				if err != nil {
					break
				}
			}
			if n != len(body) {
				t.Errorf("server got %d bytes", n)
			}
			w.WriteHeader(http.StatusCreated)
		}), Options{Stall: 3 * time.Second})
		start := time.Now()
		existing, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", bytes.NewReader(body))
		if err != nil || existing {
			t.Fatalf("existing=%v err=%v", existing, err)
		}
		if d := time.Since(start); d < 10*time.Second {
			t.Fatalf("took %v: the target was not slow", d)
		}
	})
}

// slowSource yields its bytes in 64 KiB pieces, each after a pause (a
// paced repair read); its end comes at once.
type slowSource struct {
	r     *bytes.Reader
	pause time.Duration
}

func (s *slowSource) Read(p []byte) (int, error) {
	if s.r.Len() == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.pause)
	return s.r.Read(p[:min(len(p), 64<<10)])
}

// TestPutReplicaSlowSourceIsNotAStall: waits inside the body's own Read
// (repair pacing, even a pause) do not count against the target.
func TestPutReplicaSlowSourceIsNotAStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body, id := payload(256 << 10)
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n, _ := io.Copy(io.Discard, r.Body); n != int64(len(body)) {
				t.Errorf("server got %d bytes", n)
			}
			w.WriteHeader(http.StatusCreated)
		}), Options{Stall: 3 * time.Second})
		src := &slowSource{r: bytes.NewReader(body), pause: 10 * time.Second}
		if existing, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", src); err != nil || existing {
			t.Fatalf("existing=%v err=%v", existing, err)
		}
	})
}

// TestPutReplicaNoAnswer: a target that takes the whole body but never
// answers fails with a stall Stall after the last byte.
func TestPutReplicaNoAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		body, id := payload(1000)
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}), Options{Stall: 2 * time.Second})
		t.Cleanup(func() { close(release) })
		start := time.Now()
		_, err := f.c.PutReplica(context.Background(), f.base, id, int64(len(body)), "", bytes.NewReader(body))
		putErr(t, err, 0, ReasonStall)
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("failed after %v, want 2s", d)
		}
	})
}

// TestPutReplicaNoHTTPAnswer: refused connections, token failures, bad base
// URLs and a failing local read are connection failures without a status.
func TestPutReplicaNoHTTPAnswer(t *testing.T) {
	localErr := errors.New("chunk 3 corrupt")
	cases := []struct {
		name    string
		opt     Options
		base    string // "" = the fixture's
		refuse  bool
		body    io.Reader
		source  bool
		reached bool
	}{
		{name: "refused", refuse: true},
		{name: "token", opt: Options{Token: failToken}},
		{name: "bad base", base: "ftp://peer.test"},
		{name: "base with query", base: "http://peer.test:80/?x=1"},
		{name: "local read", body: &failingReader{n: 70 << 10, err: localErr}, source: true, reached: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reached bool
				f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reached = true
					_, _ = io.Copy(io.Discard, r.Body)
					w.WriteHeader(http.StatusCreated)
				}), tc.opt)
				f.pl.SetRefuse(tc.refuse)
				base := f.base
				if tc.base != "" {
					base = tc.base
				}
				body, id := payload(100 << 10)
				var src io.Reader = bytes.NewReader(body)
				if tc.body != nil {
					src = tc.body
				}
				_, err := f.c.PutReplica(context.Background(), base, id, int64(len(body)), "", src)
				pe := putErr(t, err, 0, ReasonConnection)
				var se *SourceError
				if errors.As(pe, &se) != tc.source || (tc.source && !errors.Is(err, localErr)) {
					t.Fatalf("source error %v, want %v", pe.Err, tc.source)
				}
				if reached != tc.reached {
					t.Fatalf("handler reached = %v", reached)
				}
			})
		})
	}
}

// TestPutReplicaEmptyObject sends Content-Length: 0 without Expect.
func TestPutReplicaEmptyObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, id := payload(0)
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength != 0 || len(r.TransferEncoding) != 0 || r.Header.Get("Expect") != "" {
				t.Errorf("length %d, te %v, expect %q", r.ContentLength, r.TransferEncoding, r.Header.Get("Expect"))
			}
			w.WriteHeader(http.StatusCreated)
		}), Options{})
		if existing, err := f.c.PutReplica(context.Background(), f.base, id, 0, "", bytes.NewReader(nil)); err != nil || existing {
			t.Fatalf("existing=%v err=%v", existing, err)
		}
		_, err := f.c.PutReplica(context.Background(), f.base, id, -1, "", bytes.NewReader(nil))
		putErr(t, err, 0, ReasonConnection)
	})
}

// TestPutReplicaCancelled: the caller's context ending is a connection
// failure wrapping its error, not a stall.
func TestPutReplicaCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}), Options{})
		t.Cleanup(func() { close(release) })
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		body, id := payload(10)
		_, err := f.c.PutReplica(ctx, f.base, id, int64(len(body)), "", bytes.NewReader(body))
		putErr(t, err, 0, ReasonConnection)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v does not wrap the deadline", err)
		}
	})
}

// stampedReader remembers when it last returned bytes.
type stampedReader struct {
	r    io.Reader
	last time.Time
}

func (s *stampedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.last = time.Now()
	}
	return n, err
}
