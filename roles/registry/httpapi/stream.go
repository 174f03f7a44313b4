package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/segment"
)

// streamBatch is how many versions a stream sends between checks of its
// context, the hub's shutdown and its lag.
const streamBatch = 64

// errShutdown ends a stream because the hub closed.
var errShutdown = errors.New("registry stream: hub closed")

// sink receives one subscriber's output. An error (a *writeError) ends the
// subscription; its disconnect reason comes from reasonOf.
type sink interface {
	event(u registryapi.Update) error
	comment(text string) error
}

// stream is one subscriber: a cursor over the committed versions.
type stream struct {
	h        *Hub
	out      sink
	next     uint64 // next version to send
	replayTo uint64 // HEAD when it subscribed: no lag skipping up to here
}

// startAt returns the first version a subscriber sends: last+1 to resume
// after a valid last (≤ head), else head (a fresh start sends HEAD first).
func startAt(last *uint64, head uint64) uint64 {
	if last == nil || *last > head {
		return head
	}
	return *last + 1
}

// serve runs a subscriber resuming after last (nil: fresh) until ctx ends,
// the hub closes or a write fails. It counts the disconnect under its
// reason; a server-side failure (an unreadable log record) is logged
// instead.
func (h *Hub) serve(ctx context.Context, out sink, last *uint64) {
	var head uint64 // no HEAD yet (a replicated registry before its init entry): start at genesis
	if hd := h.a.c.Head(); hd != nil {
		head = hd.Version
	}
	s := &stream{h: h, out: out, next: startAt(last, head), replayTo: head}
	err := s.run(ctx)
	if reason := reasonOf(ctx, err); reason != "" {
		h.a.m.disconnect(reason)
		return
	}
	h.a.opt.Logger.Error().Err(err).Uint64("version", s.next).Msg("registry stream ended by a log read failure")
}

// reasonOf classifies the error that ended a stream: shutdown; client
// (its context ended, or a write failed); write_timeout (a write blocked
// past its deadline); or "" for a server-side failure.
func reasonOf(ctx context.Context, err error) string {
	var we *writeError
	switch {
	case errors.Is(err, errShutdown):
		return discShutdown
	case errors.As(err, &we):
		var ne net.Error
		if errors.Is(we.err, os.ErrDeadlineExceeded) || (errors.As(we.err, &ne) && ne.Timeout()) {
			return discWriteTimeout
		}
		return discClient
	case ctx.Err() != nil:
		return discClient
	}
	return ""
}

// writeError wraps a sink's failure to deliver output to its subscriber.
type writeError struct{ err error }

func (e *writeError) Error() string { return "registry stream write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// run sends versions as they become durable, a heartbeat comment after
// stream_heartbeat without a write, until an error ends it.
func (s *stream) run(ctx context.Context) error {
	beat := s.h.a.settings().StreamHeartbeat
	hb := time.NewTimer(beat)
	defer hb.Stop()
	for {
		wake := s.h.changed()
		wrote, err := s.catchUp(ctx)
		if err != nil {
			return err
		}
		if wrote {
			hb.Reset(beat)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.h.done:
			return errShutdown
		case <-wake:
		case <-hb.C:
			if err := s.out.comment("hb"); err != nil {
				return err
			}
			beat = s.h.a.settings().StreamHeartbeat
			hb.Reset(beat)
		}
	}
}

// alive returns why the stream must stop now, if it must.
func (s *stream) alive(ctx context.Context) error {
	select {
	case <-s.h.done:
		return errShutdown
	default:
	}
	return ctx.Err()
}

// catchUp sends every version from s.next to HEAD, skipping ahead when a
// live subscriber lags more than stream_max_lag versions.
func (s *stream) catchUp(ctx context.Context) (wrote bool, err error) {
	for {
		if err := s.alive(ctx); err != nil {
			return wrote, err
		}
		hd := s.h.a.c.Head()
		if hd == nil {
			return wrote, nil
		}
		head := hd.Version
		if min := s.h.a.opt.MinIndex(); s.next < min {
			s.next = min // pruned start: the subscriber sees the gap
		}
		if s.next > head {
			return wrote, nil
		}
		if err := s.skipLag(head); err != nil {
			return true, err
		}
		to := min(head, s.next+streamBatch-1)
		if err := s.send(s.next, to); err != nil {
			return true, err
		}
		wrote = true
	}
}

// skipLag jumps a live subscriber more than stream_max_lag versions behind
// HEAD to HEAD: ": skipped a-b" and ron_registry_sse_dropped_total += b−a+1.
func (s *stream) skipLag(head uint64) error {
	lag := head - s.next + 1
	if s.next <= s.replayTo || lag <= uint64(s.h.a.settings().StreamMaxLag) {
		return nil
	}
	a, b := s.next, head-1
	if err := s.out.comment(fmt.Sprintf("skipped %d-%d", a, b)); err != nil {
		return err
	}
	s.h.a.m.dropped.Add(int(b - a + 1))
	s.next = head
	return nil
}

// send writes versions from..to: from the ring while it has them, then
// from the log. A version pruned meanwhile moves the cursor to min_index.
func (s *stream) send(from, to uint64) error {
	for v := from; v <= to; v++ {
		u, ok := s.h.recent(v)
		if !ok {
			return s.sendFromLog(v, to)
		}
		if err := s.emit(u); err != nil {
			return err
		}
	}
	return nil
}

// sendFromLog writes versions from..to read from the segment log.
func (s *stream) sendFromLog(from, to uint64) error {
	log := s.h.a.opt.Log
	err := log.Scan(from, to, func(r segment.Record) error {
		u, err := updateOf(r)
		if err != nil {
			return err
		}
		return s.emit(u)
	})
	if errors.Is(err, segment.ErrPruned) && log.MinIndex() > s.next {
		s.next = log.MinIndex()
		return nil
	}
	return err
}

// emit writes u and advances the cursor past it.
func (s *stream) emit(u registryapi.Update) error {
	if err := s.out.event(u); err != nil {
		return err
	}
	s.next = u.Version + 1
	return nil
}

// updateOf builds the event of a log record.
func updateOf(r segment.Record) (registryapi.Update, error) {
	var hdr struct {
		PayloadB3   string `json:"payload_b3"`
		CommittedAt string `json:"committed_at"`
	}
	if err := json.Unmarshal(r.Artifact, &hdr); err != nil {
		return registryapi.Update{}, fmt.Errorf("%w: version %d artifact: %v", segment.ErrCorrupt, r.Version, err)
	}
	return registryapi.Update{Version: r.Version, PayloadB3: hdr.PayloadB3, CommittedAt: hdr.CommittedAt, CorrID: r.CorrID}, nil
}
