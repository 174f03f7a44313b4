package tenant

import (
	"context"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"golang.org/x/time/rate"
)

// ByteChunk is the largest piece charged to a byte bucket at once: uploads
// are charged per 64 KiB chunk (docs/gateway.md §3.6).
const ByteChunk = 64 << 10

// minByteBurst is the smallest byte bucket: burst = max(max_bytes_per_s, 1 MiB).
const minByteBurst = 1 << 20

// byteBurst is the byte bucket size for a quota of bps bytes per second.
func byteBurst(bps int64) int {
	return int(min(max(bps, minByteBurst), math.MaxInt32))
}

// setByteQuota applies p's byte quota to st at now: no quota (0, or invalid
// params) removes the bucket; a quota that was off starts with a full
// bucket; a changed quota keeps the bucket's level, clamped to the new burst.
func (st *State) setByteQuota(now time.Time, p Params) {
	if p.Validate() != nil || p.MaxBytesPerS <= 0 {
		st.bytes.Store(nil)
		return
	}
	lim := st.bytes.Load()
	if lim == nil {
		st.bytes.Store(rate.NewLimiter(rate.Limit(p.MaxBytesPerS), byteBurst(p.MaxBytesPerS)))
		return
	}
	lim.SetLimitAt(now, rate.Limit(p.MaxBytesPerS))
	lim.SetBurstAt(now, byteBurst(p.MaxBytesPerS))
}

// WaitBytes charges n bytes to st's byte bucket (docs/gateway.md §3.6),
// waiting while it is empty: the upload is paced, not rejected. Calls are
// meant for at most ByteChunk bytes; a larger n is charged in ByteChunk
// pieces, each under the same rule. When one piece would wait longer than
// maxWait, WaitBytes returns at once, without waiting or charging that
// piece, 429 rate_limited (details.limit "tenant_bytes") with Retry-After =
// the wait in whole seconds rounded up (≥ 1). When ctx ends first it returns
// ctx.Err() and gives the piece's bytes back. A tenant without a byte quota
// (max_bytes_per_s 0) and n ≤ 0 return nil at once.
func (s *States) WaitBytes(ctx context.Context, st *State, n int, maxWait time.Duration) error {
	for n > 0 {
		piece := min(n, ByteChunk)
		if err := s.waitPiece(ctx, st, piece, maxWait); err != nil {
			return err
		}
		n -= piece
	}
	return nil
}

// waitPiece charges one piece of at most ByteChunk bytes.
func (s *States) waitPiece(ctx context.Context, st *State, n int, maxWait time.Duration) error {
	lim := st.bytes.Load()
	if lim == nil {
		return nil
	}
	now := s.now()
	r := lim.ReserveN(now, n)
	delay := r.DelayFrom(now)
	if !r.OK() || delay > maxWait {
		r.CancelAt(now)
		return errTenantBytes(delay)
	}
	if delay == 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.CancelAt(s.now())
		return ctx.Err()
	}
}

// errTenantBytes is the 429 of a piece that would wait delay.
func errTenantBytes(delay time.Duration) error {
	secs := math.Ceil(delay.Seconds())
	retry := math.MaxInt32
	if secs < math.MaxInt32 {
		retry = max(1, int(secs))
	}
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeRateLimited, "tenant byte quota").
		WithRetryAfter(retry).WithDetails(map[string]any{"limit": "tenant_bytes"})
}

// PacedReader wraps an upload body so that every Read charges the bytes it
// returns to st's byte bucket through WaitBytes (with ctx and maxWait). Each
// Read asks body for at most ByteChunk bytes, so one Read is one charge.
// The quota is looked up on every Read, so a live change applies mid-upload.
// A charge that fails ends the reader: that Read and every later one return
// the charge's error (429 rate_limited, or ctx.Err()) and no bytes. The
// returned reader is a *Paced, whose Err reports that error.
func (s *States) PacedReader(ctx context.Context, st *State, body io.Reader, maxWait time.Duration) io.Reader {
	return &Paced{s: s, ctx: ctx, st: st, body: body, maxWait: maxWait}
}

// Paced is the reader PacedReader returns. Reads must not run concurrently
// (as for any io.Reader); Err may be called from any goroutine.
type Paced struct {
	s       *States
	ctx     context.Context
	st      *State
	body    io.Reader
	maxWait time.Duration
	err     atomic.Pointer[error] // the charge error that ended the reader
}

// Read implements io.Reader.
func (p *Paced) Read(b []byte) (int, error) {
	if err := p.Err(); err != nil {
		return 0, err
	}
	if len(b) > ByteChunk {
		b = b[:ByteChunk]
	}
	n, err := p.body.Read(b)
	if n > 0 {
		if cerr := p.s.WaitBytes(p.ctx, p.st, n, p.maxWait); cerr != nil {
			p.err.Store(&cerr)
			return 0, cerr
		}
	}
	return n, err
}

// Err returns the charge error that ended the reader (nil while none did):
// the gateway answers it instead of whatever the upstream made of the
// aborted body.
func (p *Paced) Err() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}
