package hygiene

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ronhq/ron/httpx"
)

// EdgePath maps the raw (still escaped) rest of an `/edge/{rest}` request to
// the path sent to the edge role (docs/gateway.md §6). rest is decoded exactly
// once; it is rejected with a 400 bad_request *httpx.Error when it holds an
// encoded slash (%2F), an invalid escape, a backslash or NUL after decoding,
// a `.` or `..` segment (also spelled %2e), or an empty segment other than a
// trailing one. The result starts with "/" and is rebuilt from the decoded
// segments with url.PathEscape, so it never contains raw text from rest; a
// trailing slash is kept, and an empty rest yields "/".
func EdgePath(rest string) (string, error) {
	if strings.Contains(strings.ToLower(rest), "%2f") {
		return "", badPath("encoded slash in path")
	}
	dec, err := url.PathUnescape(rest)
	if err != nil {
		return "", badPath("invalid percent-encoding in path")
	}
	if strings.ContainsAny(dec, "\\\x00") {
		return "", badPath("backslash or NUL in path")
	}
	segs := strings.Split(dec, "/")
	var b strings.Builder
	for i, s := range segs {
		if err := checkSegment(s, i == len(segs)-1); err != nil {
			return "", err
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

// checkSegment validates one decoded segment; only the last may be empty.
func checkSegment(s string, last bool) error {
	switch {
	case s == "." || s == "..":
		return badPath("dot segment in path")
	case s == "" && !last:
		return badPath("empty segment in path")
	}
	return nil
}

func badPath(msg string) error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s", msg)
}
