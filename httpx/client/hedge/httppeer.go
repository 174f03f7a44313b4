package hedge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/ronhq/ron/httpx/client"
)

// MaxAnswer bounds a peer's answer body (docs/index.md §6: strict JSON ≤ 1 MiB).
const MaxAnswer = 1 << 20

// HTTPPeer is a Peer that asks another index node over HTTP:
// GET {Path}?local=1, so the peer answers from its own store and never fans
// out further (docs/index.md §6). It makes one attempt per Lookup (Lookup does the retries)
// and relies on the Client's breaker, which ignores attempts ended by a
// cancelled context (losing legs).
type HTTPPeer[T any] struct {
	// Client talks to the peer; its Target() is the peer's name.
	Client *client.Client
	// Path is the lookup route, e.g. "/providers/" + b3; Op is its template
	// for metrics ("GET /providers/{b3}").
	Path, Op string
	// Check, when set, validates a decoded answer (key equal to the one
	// asked, no expired records); its error makes the answer invalid.
	Check func(T) error
}

// Name returns the peer's host[:port].
func (p *HTTPPeer[T]) Name() string { return p.Client.Target() }

// Available reports whether the peer's breaker lets calls through; Lookup
// skips a peer whose breaker is open.
func (p *HTTPPeer[T]) Available() bool { return p.Client.BreakerState() != client.StateOpen }

// Lookup asks the peer once. A 404 comes back as an *httpx.Error with status
// 404 (not found); other non-2xx statuses and transport failures as the
// Client's errors; a body that is not strict JSON of at most MaxAnswer bytes,
// or that Check rejects, as an error wrapping ErrInvalidAnswer. The answer is
// read and checked before the Client's breaker hears of the attempt, so an
// invalid answer counts as a failure there (docs/index.md §6).
func (p *HTTPPeer[T]) Lookup(ctx context.Context) (T, error) {
	var v T
	op := p.Op
	if op == "" {
		op = "GET peer_lookup"
	}
	_, err := p.Client.Do(ctx, &client.Request{Path: p.Path, Query: url.Values{"local": {"1"}},
		Retry: client.RetryNever, Op: op,
		Validate: func(resp *http.Response) error { return p.read(op, resp.Body, &v) }})
	return v, err
}

// read reads and decodes one answer body.
func (p *HTTPPeer[T]) read(op string, r io.Reader, v *T) error {
	body, err := io.ReadAll(io.LimitReader(r, MaxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", op, p.Name(), err)
	}
	if err := p.decode(body, v); err != nil {
		return fmt.Errorf("%w from %s: %v", ErrInvalidAnswer, p.Name(), err)
	}
	return nil
}

// decode is strict: size-capped, unknown fields and trailing data rejected.
func (p *HTTPPeer[T]) decode(body []byte, v *T) error {
	if len(body) > MaxAnswer {
		return fmt.Errorf("answer over %d bytes", MaxAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the answer")
	}
	if p.Check != nil {
		return p.Check(*v)
	}
	return nil
}
