// Package vfetch reads objects from storage nodes and providers over HTTP
// with the verified transfer of docs/storage.md §4 (package store/verified):
// the Bao outboard (GET {base}/o/{b3}/outboard, Outboard), then the whole
// body or a group-aligned range of it (GET {base}/o/{b3}, Open) whose 64 KiB
// groups are released only once verified against the id; the proof of the
// size an outboard states (ProveSize: the last group, read and verified,
// remembered in the Requester's Sizes); and the size and type (HEAD
// {base}/o/{b3}, Head), which nothing verifies. Every source goes
// through the outboard, the co-located storage too; a source without one (a
// ron from before verified streaming) is refused with ErrNoOutboard.
//
// Every request waits at most the Requester's Timeout for its response
// headers, then at most Timeout per progress phase: a 64 KiB block of the
// outboard, one group of the body. A phase that overruns cancels the request
// and ends in ErrTimeout. The timers are runtime timers: the package starts
// no goroutines, and every call runs on its caller's goroutine, bounded by
// the caller's context and the Timeout.
//
// Requests carry nothing of the caller's client: Accept-Encoding: identity,
// the Requester's User-Agent, Range when needed, and whatever Prepare adds.
// Whether redirects are followed is the HTTP client's policy; callers
// reading untrusted URLs disable them.
package vfetch

import (
	"errors"
	"strconv"
)

// Errors of a request, besides store/verified's (ErrMismatch, ErrShort,
// ErrLong, ErrBadOutboard) and the transport's.
var (
	// ErrNoOutboard: the source answers 404 to GET /o/{b3}/outboard but
	// holds the object (HEAD /o/{b3} 200): it runs a ron from before
	// verified streaming. Readers treat it as a failed source.
	ErrNoOutboard = errors.New("vfetch: the source runs a ron without Bao outboards (before verified streaming): upgrade it")
	// ErrTimeout: no response headers, or no progress in a phase, within
	// the Requester's Timeout.
	ErrTimeout = errors.New("vfetch: no progress within the timeout")
	// ErrProtocol: the answer is framed wrongly (Content-Range or
	// Content-Length not those of the request, no Content-Length where one
	// is needed).
	ErrProtocol = errors.New("vfetch: answer framed wrongly")
)

// Values OnStatus receives for requests that got no status.
const (
	CodeError   = "error"   // a connection or protocol failure
	CodeTimeout = "timeout" // no response headers within the Timeout
)

// StatusError is an answer whose status is not the one the request
// expects.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return "vfetch: source answered " + strconv.Itoa(e.Code) }
