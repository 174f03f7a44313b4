package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
)

// TestBareMountGuardsBodies mounts the API on an echo without httpx's
// middleware: compressed bodies are still decoded under the decode guard.
func TestBareMountGuardsBodies(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		ec := echo.New()
		ec.HTTPErrorHandler = func(err error, c echo.Context) { httpx.WriteError(c.Response(), "", err) }
		e.a.Mount(ec)
		cases := []struct {
			name   string
			body   []byte
			status int
			code   string
		}{
			{"gzip body", gz(validPropose(e)), 202, ""},
			{"gzip bomb", gz(bytes.Repeat([]byte(" "), 4<<20)), 413, "decoded_cap"},
			{"not gzip", []byte("plain"), 400, "malformed"},
		}
		for _, c := range cases {
			req := httptest.NewRequest(http.MethodPost, "/registry/proposals", bytes.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", "gzip")
			req.Header.Set("Authorization", "Bearer "+e.token(registryapi.ScopePropose))
			rec := httptest.NewRecorder()
			ec.ServeHTTP(rec, req)
			if rec.Code != c.status || (c.code != "" && httpx.DecodeError(rec.Code, rec.Body.Bytes()).Code != c.code) {
				t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
			}
		}
	})
}

func TestCheckCommitBody(t *testing.T) {
	cases := []struct {
		body, ctype string
		code        string
	}{
		{"", "", ""}, {"  \n", "", ""}, {"{}", "application/json", ""}, {" { \t} ", "application/json; charset=utf-8", ""},
		{"{}", "", "unsupported_media_type"}, {"{}", "text/plain", "unsupported_media_type"},
		{"{", "application/json", "malformed"}, {"}", "application/json", "malformed"}, {"{}}", "application/json", "malformed"},
		{`{"a":1}`, "application/json", "malformed"}, {"[]", "application/json", "malformed"}, {"null", "application/json", "malformed"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "/registry/commit/x", nil)
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		err := checkCommitBody(r, []byte(c.body))
		if got := codeOrEmpty(err); got != c.code {
			t.Errorf("body %q type %q: %q, want %q", c.body, c.ctype, got, c.code)
		}
	}
}

func codeOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return httpx.AsError(err).Code
}

func TestParseVersion(t *testing.T) {
	good := map[string]uint64{"0": 0, "7": 7, "10": 10, "18446744073709551615": 1<<64 - 1}
	for s, v := range good {
		if got, err := parseVersion(s); err != nil || got != v {
			t.Errorf("parseVersion(%q) = %d, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "00", "01", "-0", "+1", "1.0", "1e3", " 1", "1 ", "0x1", "18446744073709551616", "١"} {
		if _, err := parseVersion(s); codeOrEmpty(err) != "bad_request" {
			t.Errorf("parseVersion(%q) accepted or wrong error: %v", s, err)
		}
	}
}

func TestCheckArtifact(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.cycle("a")
		rec, _ := e.log.Read(1)
		good := string(rec.Artifact)
		cases := []struct {
			name string
			v    uint64
			body string
			ok   bool
		}{
			{"good", 1, good, true},
			{"other version", 2, good, false},
			{"not json", 1, "{", false},
			{"payload edited", 1, strings.Replace(good, `"note":"a"`, `"note":"b"`, 1), false},
		}
		for _, c := range cases {
			_, err := registryapi.CheckArtifact(c.v, []byte(c.body))
			if c.ok != (err == nil) || (err != nil && codeOrEmpty(err) != "corrupt") {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	})
}

func TestCleanCorrID(t *testing.T) {
	cases := map[string]string{"abc": "abc", "a b\tc\x00d": "abcd", strings.Repeat("x", 70): strings.Repeat("x", 64), "é": ""}
	for in, want := range cases {
		if got := cleanCorrID(in); got != want {
			t.Errorf("cleanCorrID(%q) = %q, want %q", in, got, want)
		}
	}
}
