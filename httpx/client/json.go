package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxJSONResponse bounds the size of a JSON response body JSON decodes.
const MaxJSONResponse = 16 << 20

// JSON sends in (when non-nil) as a JSON body and decodes a 2xx response into
// out (when non-nil and the status is not 204). path may carry a query
// ("/inventory?after=x"). Retries follow the method (RetryByMethod), the op
// label is the method, and every non-2xx status is an error as in Do.
func (c *Client) JSON(ctx context.Context, method, path string, in, out any) error {
	req, err := jsonRequest(method, path, in)
	if err != nil {
		return err
	}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxJSONResponse)).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: decode response: %w", method, c.target, err)
	}
	return nil
}

func jsonRequest(method, path string, in any) (*Request, error) {
	p, rawQuery, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("client: query: %w", err)
	}
	req := &Request{Method: method, Path: p, Query: q, Header: http.Header{"Accept": {"application/json"}}}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("client: encode request: %w", err)
		}
		req.Body = bytes.NewReader(b)
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}
