package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/ronhq/ron/store"
)

// MaxHasIDs is the most ids one /inventory/has call takes (docs/storage.md §4).
const MaxHasIDs = 1000

// hasReply is the answer of POST /inventory/has: the held ids in input order.
type hasReply struct {
	Present []string `json:"present"`
}

// Has asks base's POST /inventory/has for ids (1–1000) and returns which are
// held: every id of ids is a key, true when base holds it. A count outside
// 1–1000 is an error before any I/O; every failure of the exchange is a
// *PutError (an unparsable 200 answer has Reason "rejected"). The whole
// exchange must make progress within Options.Stall.
func (c *Client) Has(ctx context.Context, base string, ids []store.ID) (map[store.ID]bool, error) {
	if len(ids) < 1 || len(ids) > MaxHasIDs {
		return nil, fmt.Errorf("peer: Has takes 1 to %d ids, got %d", MaxHasIDs, len(ids))
	}
	target, err := endpoint(base, "/inventory/has")
	if err != nil {
		return nil, &PutError{Reason: ReasonConnection, Err: err}
	}
	ctx, wd := watch(ctx, c.opt.Stall)
	defer wd.stop()
	req, err := c.hasRequest(ctx, target, ids)
	if err != nil {
		return nil, &PutError{Reason: ReasonConnection, Err: err}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer discard(resp.Body, maxHasReplyBytes)
	wd.kick()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp)
	}
	held, err := readHas(resp.Body, ids)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.transportError(ctx, err)
		}
		return nil, &PutError{Status: resp.StatusCode, Reason: ReasonRejected, Err: err}
	}
	return held, nil
}

// hasRequest builds POST /inventory/has with {"ids":[…]}.
func (c *Client) hasRequest(ctx context.Context, target string, ids []store.ID) (*http.Request, error) {
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = id.String()
	}
	body, err := json.Marshal(map[string][]string{"ids": strs})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if err := c.authorize(ctx, req); err != nil {
		return nil, fmt.Errorf("peer: node token: %w", err)
	}
	return req, nil
}

// readHas decodes a bounded answer into a map over ids; ids the answer names
// that were not asked for are ignored.
func readHas(body io.Reader, ids []store.ID) (map[store.ID]bool, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxHasReplyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHasReplyBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", maxHasReplyBytes)
	}
	var reply hasReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return nil, fmt.Errorf("unparsable answer: %w", err)
	}
	held := make(map[store.ID]bool, len(ids))
	for _, id := range ids {
		held[id] = false
	}
	for _, s := range reply.Present {
		id, err := store.ParseID(s)
		if err != nil {
			return nil, fmt.Errorf("answer names %q: %w", s, err)
		}
		if _, asked := held[id]; asked {
			held[id] = true
		}
	}
	return held, nil
}
