package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
)

func TestFromRequest(t *testing.T) {
	cases := []struct {
		header []string
		tok    string
		ok     bool
	}{
		{nil, "", false},
		{[]string{"Bearer abc"}, "abc", true},
		{[]string{"bearer abc"}, "abc", true},
		{[]string{"Bearer  abc "}, "abc", true},
		{[]string{"Bearer "}, "", false},
		{[]string{"Bearer"}, "", false},
		{[]string{"Basic abc"}, "", false},
		{[]string{"Bearer a", "Bearer b"}, "", false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, h := range tc.header {
			r.Header.Add("Authorization", h)
		}
		tok, ok := FromRequest(r)
		if tok != tc.tok || ok != tc.ok {
			t.Errorf("%q: got %q %v", tc.header, tok, ok)
		}
	}
}

func TestCheckKinds(t *testing.T) {
	k := testKeyring(t, 1)
	now := time.Now()
	write := mint(t, k, MintOptions{Scopes: []string{"storage:write"}, Now: now})
	cases := []struct {
		name   string
		header string
		scope  string
		kind   string
	}{
		{"missing", "", "storage:write", KindMissing},
		{"basic", "Basic Zm9vOmJhcg", "storage:write", KindInvalid},
		{"garbage", "Bearer zzz", "storage:write", KindInvalid},
		{"expired", "Bearer " + mint(t, k, MintOptions{Scopes: []string{"admin"}, Now: now.Add(-2 * time.Hour)}), "storage:write", KindExpired},
		{"scope", "Bearer " + write, "storage:admin", KindScope},
		{"ok", "Bearer " + write, "storage:write", ""},
		{"authenticate only", "Bearer " + write, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/o", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			c, err := Check(k, r, tc.scope, now)
			wantKind(t, err, tc.kind)
			if err == nil && c == nil {
				t.Fatal("nil claims")
			}
		})
	}
}

func TestRequireMiddleware(t *testing.T) {
	k := testKeyring(t, 1)
	tok := mint(t, k, MintOptions{Scopes: []string{"storage:write"}, Now: time.Now()})
	var kinds []string
	e := echo.New()
	var seen *Claims
	mw := Require(k, "storage:write", func(kind string) { kinds = append(kinds, kind) })
	e.PUT("/o", func(c echo.Context) error {
		seen = ClaimsFrom(c)
		return c.NoContent(http.StatusCreated)
	}, mw)
	e.DELETE("/o", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) },
		Require(k, "storage:admin", func(kind string) { kinds = append(kinds, kind) }))

	rec := serve(e, http.MethodPut, "", "corr-1")
	assertEnvelope(t, rec, http.StatusUnauthorized, httpx.CodeUnauthorized, "corr-1")
	if rec.Header().Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("WWW-Authenticate = %q", rec.Header().Get("WWW-Authenticate"))
	}

	rec = serve(e, http.MethodDelete, tok, "corr-2")
	assertEnvelope(t, rec, http.StatusForbidden, httpx.CodeForbidden, "corr-2")
	if rec.Header().Get("WWW-Authenticate") != "" {
		t.Error("403 carries WWW-Authenticate")
	}

	rec = serve(e, http.MethodPut, tok, "")
	if rec.Code != http.StatusCreated || seen == nil || !seen.Allows("storage:write") {
		t.Fatalf("authorized request: %d, claims %+v", rec.Code, seen)
	}
	if len(kinds) != 2 || kinds[0] != KindMissing || kinds[1] != KindScope {
		t.Fatalf("onFail kinds = %v", kinds)
	}
}

func TestRequirePrefersResponseCorrID(t *testing.T) {
	e := echo.New()
	setCorr := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("X-Corr-ID", "generated")
			return next(c)
		}
	}
	e.GET("/x", func(c echo.Context) error { return nil }, setCorr, Require(testKeyring(t, 1), "admin", nil))
	rec := serve(e, http.MethodGet, "", "")
	assertEnvelope(t, rec, http.StatusUnauthorized, httpx.CodeUnauthorized, "generated")
}

func serve(e *echo.Echo, method, tok, corr string) *httptest.ResponseRecorder {
	path := "/o"
	if method == http.MethodGet {
		path = "/x"
	}
	r := httptest.NewRequest(method, path, nil)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if corr != "" {
		r.Header.Set("X-Corr-ID", corr)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	return rec
}

func assertEnvelope(t *testing.T, rec *httptest.ResponseRecorder, status int, code, corr string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d (%s)", rec.Code, status, rec.Body)
	}
	var env httpx.Envelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error == nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if env.Error.Code != code || env.Error.CorrID != corr {
		t.Fatalf("envelope = %+v, want code %s corr %s", env.Error, code, corr)
	}
}
