package live

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ronhq/ron/httpx"
)

// assetsPrefix is where the live fill is mounted (docs/edge.md §1).
const assetsPrefix = "/assets/"

// target is an /assets request mapped into origin space (docs/edge.md §7.1).
type target struct {
	origin   Origin
	rest     string // the escaped path below the origin, as the client sent it
	rawQuery string
	key      string   // cache key: origin name + "/" + rest + "?" + raw query
	send     *url.URL // the upstream URL as sent: path and query byte for byte
	canon    *url.URL // the same URL parsed (for invalidation and logs)
}

// errDotSegment answers a path with a dot segment.
var errDotSegment = httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "dot segments (., .., %%2e) are not allowed in /assets paths")

// parseTarget maps r onto its origin: 404 (reason not_allowed) for an
// unknown origin, 400 for a dot segment.
func parseTarget(r *http.Request, origins map[string]Origin) (*target, error) {
	path, query, hasQuery := requestTarget(r)
	name, rest, ok := splitAssetsPath(path)
	if !ok {
		return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such route")
	}
	o, ok := origins[name]
	if !ok {
		return nil, (httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "unknown origin %q", name)).WithReason(reasonNotAllowed)
	}
	if hasDotSegment(rest) {
		return nil, errDotSegment
	}
	send, canon, err := upstreamURL(o.URL, rest, query, hasQuery)
	if err != nil {
		return nil, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "request target: %v", err)
	}
	return &target{origin: o, rest: rest, rawQuery: query, key: cacheKey(name, rest, query), send: send, canon: canon}, nil
}

// cacheKey is the /assets cache key of docs/edge.md §7.4.
func cacheKey(origin, rest, rawQuery string) string {
	return origin + "/" + rest + "?" + rawQuery
}

// requestTarget returns the escaped path and raw query exactly as sent
// (the request-target of origin-form), falling back to the parsed URL.
func requestTarget(r *http.Request) (path, query string, hasQuery bool) {
	uri := r.RequestURI
	if !strings.HasPrefix(uri, "/") {
		uri = r.URL.RequestURI()
		if r.URL.ForceQuery && r.URL.RawQuery == "" {
			uri += "?"
		}
	}
	path, query, hasQuery = strings.Cut(uri, "?")
	return path, query, hasQuery
}

// splitAssetsPath splits "/assets/{origin}/{rest}" ("/assets/{origin}"
// counts as an empty rest).
func splitAssetsPath(path string) (name, rest string, ok bool) {
	tail, ok := strings.CutPrefix(path, assetsPrefix)
	if !ok {
		return "", "", false
	}
	name, rest, _ = strings.Cut(tail, "/")
	return name, rest, name != ""
}

// hasDotSegment reports whether a path has a "." or ".." segment, also
// percent-encoded (%2e, %2E).
func hasDotSegment(rest string) bool {
	for seg := range strings.SplitSeq(rest, "/") {
		if len(seg) == 0 || len(seg) > 6 {
			continue
		}
		s := strings.ReplaceAll(strings.ToLower(seg), "%2e", ".")
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// upstreamURL builds {origin url}/{rest}?{query}. send carries the path as
// an opaque request-target so the bytes reach the origin unchanged; canon
// is the parsed form (when the path starts with "//" it is used for
// sending too, since an opaque "//" would read as a host).
func upstreamURL(base *url.URL, rest, query string, hasQuery bool) (send, canon *url.URL, err error) {
	p := base.EscapedPath() + "/" + rest
	raw := base.Scheme + "://" + base.Host + p
	if hasQuery {
		raw += "?" + query
	}
	canon, err = url.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	send = &url.URL{Scheme: base.Scheme, Host: base.Host, RawQuery: query, ForceQuery: hasQuery && query == ""}
	if strings.HasPrefix(p, "//") {
		send.Path, send.RawPath = canon.Path, canon.RawPath
	} else {
		send.Opaque = p
	}
	return send, canon, nil
}
