package storage

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
)

// putReply is the JSON answer to a write.
type putReply struct {
	CID     string `json:"cid"`
	Size    int64  `json:"size"`
	Created bool   `json:"created"`
}

func (r *Role) handlePost(c echo.Context) error {
	if err := r.authorize(c, scopeWrite); err != nil {
		return err
	}
	return r.write(c, nil)
}

func (r *Role) handlePut(c echo.Context) error {
	if err := r.authorize(c, scopeWrite); err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	return r.write(c, &id)
}

// write runs checks 4–9 of spec/storage.md §3 before reading any body byte,
// then streams the body into the engine.
func (r *Role) write(c echo.Context, want *store.ID) error {
	req, cfg := c.Request(), r.cfg.Load()
	meta, err := writeMeta(req.Header)
	if err != nil {
		return err
	}
	if req.ContentLength > int64(cfg.MaxObjectBytes) {
		r.metrics.write("too_large")
		return storeError(store.ErrTooLarge)
	}
	if err := r.writable(); err != nil {
		return err
	}
	return r.admitted(c, r.admit.put, func() error {
		if want != nil {
			if info, err := r.engine.Stat(req.Context(), *want); err == nil {
				r.metrics.write("existing")
				return r.replyWrite(c, info, false)
			}
		}
		if err := r.checkSpace(req.ContentLength); err != nil {
			return err
		}
		return r.stream(c, want, meta)
	})
}

// writable answers 503 while draining or while the write probe fails.
func (r *Role) writable() error {
	if r.draining.Load() {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "node is shutting down").WithRetryAfter(5)
	}
	if !r.probeOK() {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "storage is not ready: %v", errNotReady).WithRetryAfter(5)
	}
	return nil
}

// writeMeta applies the Content-Encoding and Content-Type rules of
// spec/storage.md §3 step 4.
func writeMeta(h http.Header) (store.Meta, error) {
	if enc := strings.TrimSpace(h.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return store.Meta{}, httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMedia,
			"objects are stored as sent: upload without Content-Encoding (the id is the hash of the bytes on the wire)")
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		return store.Meta{}, nil
	}
	if len(ct) > store.MaxContentTypeLen {
		return store.Meta{}, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "Content-Type longer than %d bytes", store.MaxContentTypeLen)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (store.Meta{ContentType: ct}).Validate() != nil {
		return store.Meta{}, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "unparsable Content-Type")
	}
	switch mt {
	case "multipart/form-data":
		return store.Meta{}, httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMedia,
			"form uploads would store the form envelope: send the raw bytes")
	case "application/x-www-form-urlencoded":
		return store.Meta{}, nil // curl --data-binary's default: treated as absent
	}
	return store.Meta{ContentType: ct}, nil
}

// checkSpace answers 507 when the write would leave less than min_free_bytes.
func (r *Role) checkSpace(length int64) error {
	free, err := r.engine.Free()
	if err != nil {
		return err
	}
	minFree := int64(r.cfg.Load().MinFreeBytes)
	if r.engineName() == "memory" {
		minFree = 0
	}
	if free < minFree || (length > 0 && free-length < minFree) {
		r.metrics.write("no_space")
		return storeError(store.ErrNoSpace)
	}
	return nil
}

// stream reads the body under the stall timeout into the engine and answers.
func (r *Role) stream(c echo.Context, want *store.ID, meta store.Meta) error {
	req, cfg := c.Request(), r.cfg.Load()
	body := newStallReader(req.Body, http.NewResponseController(c.Response()), cfg.UploadStallTimeout)
	start := time.Now()
	r.metrics.spawned("put")
	info, created, err := r.engine.Put(req.Context(), body, store.PutOptions{Want: want, Meta: meta, MaxBytes: int64(cfg.MaxObjectBytes)})
	r.metrics.bytesIn(httpx.RouteOf(c), body.n)
	if err != nil {
		return r.writeFailed(c, err)
	}
	r.metrics.putDuration().UpdateDuration(start)
	r.metrics.write(map[bool]string{true: "created", false: "existing"}[created])
	return r.replyWrite(c, info, created)
}

func (r *Role) replyWrite(c echo.Context, info store.Info, created bool) error {
	r.announce.enqueue(Record{ID: info.ID, Type: info.ContentType, TTL: r.cfg.Load().ProviderTTL})
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Response().Header().Set("Location", "/o/"+info.ID.String())
	}
	return c.JSON(status, putReply{CID: info.ID.String(), Size: info.Size, Created: created})
}

// writeFailed maps a failed Put to its answer. A client that went away gets
// no response at all.
func (r *Role) writeFailed(c echo.Context, err error) error {
	var mm *store.HashMismatchError
	switch {
	case errors.As(err, &mm):
		r.metrics.write("hash_mismatch")
	case errors.Is(err, store.ErrTooLarge):
		r.metrics.write("too_large")
	case errors.Is(err, store.ErrNoSpace):
		r.metrics.write("no_space")
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.metrics.write("aborted")
		r.metrics.ioTimeout("read_body")
		c.Response().Header().Set("Connection", "close")
		return httpx.NewError(http.StatusRequestTimeout, httpx.CodeTimeout, "no upload bytes for %s", r.cfg.Load().UploadStallTimeout)
	case errors.Is(err, context.Canceled), isBodyError(err):
		r.metrics.write("aborted")
		if r.draining.Load() {
			r.metrics.aborted("put")
		}
		panic(http.ErrAbortHandler) // the client is gone: no response
	default:
		return storeError(err)
	}
	return storeError(err)
}

// isBodyError reports a failure reading the request body (client reset,
// truncated chunked encoding, closed connection).
func isBodyError(err error) bool {
	var be *bodyReadError
	return errors.As(err, &be)
}

// bodyReadError marks errors returned by the request body itself.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading request body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// deadliner is the part of http.ResponseController the stall reader needs.
type deadliner interface{ SetReadDeadline(time.Time) error }

// stallReader pushes the connection's read deadline forward before every read
// so that an upload fails only when no byte arrives for the stall timeout.
type stallReader struct {
	r     io.Reader
	conn  deadliner
	stall time.Duration
	n     int64
}

func newStallReader(r io.Reader, conn deadliner, stall time.Duration) *stallReader {
	return &stallReader{r: r, conn: conn, stall: stall}
}

func (s *stallReader) Read(p []byte) (int, error) {
	_ = s.conn.SetReadDeadline(time.Now().Add(s.stall))
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF {
		return n, &bodyReadError{err}
	}
	return n, err
}
