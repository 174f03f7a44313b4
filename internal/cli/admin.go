package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
)

// adminTokenTTL is the lifetime of the admin tokens admin commands mint.
const adminTokenTTL = time.Minute

// maxAdminAnswer bounds an admin answer an admin command reads.
const maxAdminAnswer = 8 << 20

// AdminTarget is the admin listener and bearer of an admin command: admin
// (--admin) else the node's admin.listen; token (--token) else $RON_TOKEN,
// else an admin token minted from the node's root key when it is readable,
// else none (loopback callers need none).
func AdminTarget(env Env, getenv func(string) string, admin, token string) (string, string, error) {
	if token == "" {
		token = getenv("RON_TOKEN")
	}
	if admin != "" && token != "" {
		return admin, token, nil
	}
	n, err := env.Node()
	if err != nil {
		return "", "", Exit(ExitFailure, err)
	}
	if admin == "" {
		admin = n.AdminListen
	}
	if token == "" {
		if keys, err := n.RootKey(); err == nil {
			token, _, _ = keys.Mint(auth.MintOptions{Scopes: []string{"admin"}, TTL: adminTokenTTL})
		}
	}
	return admin, token, nil
}

// AdminCall sends one request to the admin listener at admin (in, when not
// nil, as a JSON body) within timeout and decodes a 2xx answer into out; it
// returns the raw answer too. Unreachable exits ExitUnreachable; an error
// answer exits ExitFailure with the envelope's message.
func AdminCall(ctx context.Context, timeout time.Duration, admin, token, method, path string, in, out any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := adminRequest(ctx, method, "http://"+admin+path, token, in)
	if err != nil {
		return nil, Exit(ExitFailure, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, Exit(ExitUnreachable, fmt.Errorf("admin plane at %s unreachable: %w", admin, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAdminAnswer))
	if err != nil {
		return nil, Exit(ExitUnreachable, fmt.Errorf("admin plane at %s: %w", admin, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, Exit(ExitFailure, httpx.DecodeError(resp.StatusCode, raw))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, Exit(ExitFailure, fmt.Errorf("admin plane at %s sent an invalid answer: %w", admin, err))
	}
	return raw, nil
}

// adminRequest builds an admin request with an optional JSON body.
func adminRequest(ctx context.Context, method, url, token string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}
