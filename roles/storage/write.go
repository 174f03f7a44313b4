package storage

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// putReply is the JSON answer to a write. Copies is set in cluster mode
// only (docs/cluster.md §4): single-node replies keep their shape.
type putReply struct {
	CID     string `json:"cid"`
	Size    int64  `json:"size"`
	Created bool   `json:"created"`
	Copies  int    `json:"copies,omitempty"`
}

func (r *Role) handlePost(c echo.Context) error {
	if err := r.authorize(c, storageapi.ScopeWrite); err != nil {
		return err
	}
	return r.write(c, nil)
}

func (r *Role) handlePut(c echo.Context) error {
	if err := r.authorize(c, storageapi.ScopeWrite); err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	return r.write(c, &id)
}

// write is the HTTP side of a write: it wraps the body in the stall reader,
// runs the shared putReplicated and writes the reply or the failure.
func (r *Role) write(c echo.Context, want *store.ID) error {
	req := c.Request()
	body := newStallReader(req.Body, http.NewResponseController(c.Response()), r.Cfg.Load().UploadStallTimeout)
	w := writeReq{want: want, header: req.Header, length: req.ContentLength, endpoint: httpx.RouteOf(c), body: body,
		replica: r.replicaWrite(c)}
	err := r.putReplicated(req.Context(), w, func(info store.Info, created bool, copies int) error {
		return r.replyWrite(c, info, created, copies)
	})
	return r.writeFailedHTTP(c, err)
}

// writeReq is one write as the HTTP handler and LocalClient describe it.
type writeReq struct {
	want     *store.ID   // PUT /o/{b3}: the id the body must hash to
	header   http.Header // Content-Type and Content-Encoding (docs/storage.md §3 step 4)
	length   int64       // Content-Length; -1 when unknown
	endpoint string      // route template, for metrics
	body     *stallReader
	replica  bool // an honoured X-Ron-Replica: stored locally only (docs/cluster.md §4 step 6)
}

// putObject is putReplicated for callers that have no use for the copy
// count (LocalClient).
func (r *Role) putObject(ctx context.Context, w writeReq, reply func(store.Info, bool) error) error {
	return r.putReplicated(ctx, w, func(info store.Info, created bool, _ int) error { return reply(info, created) })
}

// putReplicated runs checks 4–9 of docs/storage.md §3 in order, before any
// body byte is read, then streams the body into the engine. In cluster mode
// it then makes sure the required copies exist (docs/cluster.md §4). reply
// runs inside the PUT pool slot once the object is held (created or already
// there) and replicated, after the record was queued for announcing; copies
// is 0 when cluster mode is off. Errors are *httpx.Error values (503
// upstream_unavailable when the second copy failed: the local copy stays),
// the context's error, or errAborted (client gone).
func (r *Role) putReplicated(ctx context.Context, w writeReq, reply func(store.Info, bool, int) error) error {
	meta, err := writeMeta(w.header)
	if err != nil {
		return err
	}
	if w.length > int64(r.Cfg.Load().MaxObjectBytes) {
		r.metrics.write("too_large")
		return storeError(store.ErrTooLarge)
	}
	if err := r.writable(); err != nil {
		return err
	}
	return r.withSlot(ctx, r.work.put, w.endpoint, func() error {
		if w.want != nil {
			if info, err := r.engine.Stat(ctx, *w.want); err == nil {
				return r.held(ctx, info, false, w.replica, reply)
			}
		}
		if err := r.checkSpace(w.length); err != nil {
			return err
		}
		info, created, err := r.stream(ctx, w, meta)
		if err != nil {
			return err
		}
		return r.held(ctx, info, created, w.replica, reply)
	})
}

// held counts a successful write, queues its announcement, makes the
// required copies (cluster mode; none for a replica write) and replies.
func (r *Role) held(ctx context.Context, info store.Info, created, replica bool, reply func(store.Info, bool, int) error) error {
	r.metrics.write(map[bool]string{true: "created", false: "existing"}[created])
	r.announce.enqueue(announcing.Record{ID: info.ID, Type: info.ContentType, TTL: r.Cfg.Load().ProviderTTL})
	copies, err := r.replicate(ctx, info, created, replica)
	if err != nil {
		return err
	}
	return reply(info, created, copies)
}

// writable answers 503 while draining or while the write probe fails.
func (r *Role) writable() error {
	if r.Draining() {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "node is shutting down").WithRetryAfter(5)
	}
	if !r.probeOK() {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "storage is not ready: %v", errNotReady).WithRetryAfter(5)
	}
	return nil
}

// writeMeta applies the Content-Encoding and Content-Type rules of
// docs/storage.md §3 step 4.
func writeMeta(h http.Header) (store.Meta, error) {
	if len(httpx.ContentCodings(httpx.ContentEncoding(h))) > 0 {
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
	minFree := r.minFree()
	if free < minFree || (length > 0 && free-length < minFree) {
		r.metrics.write("no_space")
		return storeError(store.ErrNoSpace)
	}
	return nil
}

// minFree is the free space writes must leave: min_free_bytes on fs; the
// memory engine's capacity is its own limit.
func (r *Role) minFree() int64 {
	if r.engineName() == "memory" {
		return 0
	}
	return int64(r.Cfg.Load().MinFreeBytes)
}

// stream reads the body into the engine under max_object_bytes.
func (r *Role) stream(ctx context.Context, w writeReq, meta store.Meta) (store.Info, bool, error) {
	start := time.Now()
	r.metrics.spawned("put")
	maxBytes := int64(r.Cfg.Load().MaxObjectBytes)
	info, created, err := r.engine.Put(ctx, w.body, store.PutOptions{Want: w.want, Meta: meta, MaxBytes: maxBytes, Size: max(w.length, 0)})
	r.metrics.bytesIn(w.endpoint, w.body.n)
	if err != nil {
		return info, false, r.writeFailed(err)
	}
	r.metrics.putDuration().UpdateDuration(start)
	return info, created, nil
}

func (r *Role) replyWrite(c echo.Context, info store.Info, created bool, copies int) error {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Response().Header().Set("Location", "/o/"+info.ID.String())
	}
	return c.JSON(status, putReply{CID: info.ID.String(), Size: info.Size, Created: created, Copies: copies})
}

// errAborted wraps the cause of a write whose client went away (context
// ended or body unreadable): nothing was stored.
type errAborted struct{ err error }

func (e *errAborted) Error() string { return "write aborted: " + e.err.Error() }
func (e *errAborted) Unwrap() error { return e.err }

// writeFailed counts a failed engine Put and maps it to its answer: the
// envelope, or *errAborted when the client is gone.
func (r *Role) writeFailed(err error) error {
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
		return httpx.NewError(http.StatusRequestTimeout, httpx.CodeTimeout, "no upload bytes for %s", r.Cfg.Load().UploadStallTimeout)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), isBodyError(err):
		r.metrics.write("aborted")
		if r.Draining() {
			r.metrics.aborted("put")
		}
		return &errAborted{err}
	}
	return storeError(err)
}

// writeFailedHTTP adds the HTTP-only parts of a failure: a stalled upload
// closes the connection, a client that went away gets no response at all.
func (r *Role) writeFailedHTTP(c echo.Context, err error) error {
	var ab *errAborted
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ab):
		panic(http.ErrAbortHandler)
	case httpx.AsError(err).Status == http.StatusRequestTimeout:
		c.Response().Header().Set("Connection", "close")
	}
	return err
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
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

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

// Read reads from the body; a nil conn (LocalClient) sets no deadline.
// Errors other than io.EOF are wrapped in *bodyReadError.
func (s *stallReader) Read(p []byte) (int, error) {
	if s.conn != nil {
		now := time.Now()
		_ = s.conn.SetReadDeadline(now.Add(s.stall))
		// The server's write timeout runs from the request's start; an upload
		// that keeps making progress must still be able to send its reply.
		_ = s.conn.SetWriteDeadline(now.Add(s.stall + httpx.WriteTimeout))
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF {
		return n, &bodyReadError{err}
	}
	return n, err
}
