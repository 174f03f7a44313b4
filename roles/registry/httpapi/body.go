package httpapi

import (
	"bytes"
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// readBody reads a JSON request body. The listener's middleware caps it
// (1 MiB: 413 payload_too_large) and guards compressed bodies (413
// decoded_cap); mounted without that middleware, a body still carrying a
// Content-Encoding is guarded here, and every body is bounded by the
// decode guard's absolute cap so memory stays bounded either way.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if enc := httpx.ContentEncoding(r.Header); len(httpx.ContentCodings(enc)) > 0 {
		if r.ContentLength > httpx.JSONBodyCap {
			return nil, httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
				"body larger than %d bytes", httpx.JSONBodyCap)
		}
		guarded, err := httpx.GuardBody(enc, http.MaxBytesReader(w, r.Body, httpx.JSONBodyCap))
		if err != nil {
			return nil, err
		}
		r.Body = guarded
		r.Header.Del("Content-Encoding")
	}
	r.Body = http.MaxBytesReader(w, r.Body, httpx.MaxDecodedBytes)
	return httpx.ReadBody(r)
}

// checkCommitBody accepts what POST /registry/commit/{id} may carry: no
// body, or the empty object {} (whitespace allowed) sent as JSON.
func checkCommitBody(r *http.Request, body []byte) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil
	}
	if err := httpx.RequireJSON(r); err != nil {
		return err
	}
	inner := bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(trimmed, []byte("{")), []byte("}")))
	if trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' || len(inner) != 0 {
		return errMalformed(reasonBody, "commit takes no body or {}")
	}
	return nil
}
