package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
)

func TestClaimsContextRoundTrip(t *testing.T) {
	ctx := context.Background()
	if ClaimsFromContext(ctx) != nil {
		t.Fatal("empty context has claims")
	}
	if WithClaims(ctx, nil) != ctx {
		t.Fatal("WithClaims(nil) changed the context")
	}
	c := &Claims{ID: "link", Scopes: []string{"storage:write"}}
	if got := ClaimsFromContext(WithClaims(ctx, c)); got != c {
		t.Fatalf("ClaimsFromContext = %+v, want the same pointer", got)
	}
}

func TestCheckPrefersContextClaims(t *testing.T) {
	k := testKeyring(t, 1)
	now := time.Now()
	admin := mint(t, k, MintOptions{Scopes: []string{"admin"}, Now: now})
	write := &Claims{ID: "link", Scopes: []string{"storage:write", "index:write"}}
	cases := []struct {
		name   string
		claims *Claims
		header string
		scope  string
		kind   string
	}{
		{"claims allow", write, "", "storage:write", ""},
		{"claims authenticate only", write, "", "", ""},
		{"claims lack scope, header ignored", write, "Bearer " + admin, "registry:propose", KindScope},
		{"claims allow, bad header ignored", write, "Bearer zzz", "index:write", ""},
		{"claims allow, basic header ignored", write, "Basic Zm9vOmJhcg", "index:write", ""},
		{"role admin claims", &Claims{ID: "x", Scopes: []string{"storage:admin"}}, "", "storage:write", ""},
		{"role admin is not node-only", &Claims{ID: "x", Scopes: []string{"storage:admin"}}, "", "storage:replicate", KindScope},
		{"empty scopes", &Claims{ID: "x", Scopes: []string{}}, "", "storage:write", KindScope},
		{"expired claims", &Claims{ID: "x", Scopes: []string{"admin"}, Expires: now.Add(-time.Second)}, "", "storage:write", KindExpired},
		{"expiring exactly now", &Claims{ID: "x", Scopes: []string{"admin"}, Expires: now}, "", "storage:write", KindExpired},
		{"future expiry", &Claims{ID: "x", Scopes: []string{"admin"}, Expires: now.Add(time.Minute)}, "", "storage:write", ""},
		{"no claims, header used", nil, "Bearer " + admin, "storage:write", ""},
		{"no claims, no header", nil, "", "storage:write", KindMissing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/o", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			r = r.WithContext(WithClaims(r.Context(), tc.claims))
			got, err := Check(k, r, tc.scope, now)
			if KindOf(err) != tc.kind {
				t.Fatalf("kind = %q (%v), want %q", KindOf(err), err, tc.kind)
			}
			if tc.kind == "" && tc.claims != nil && got != tc.claims {
				t.Fatalf("claims = %+v, want the context's", got)
			}
			if tc.kind != "" && got != nil {
				t.Fatalf("claims %+v returned with an error", got)
			}
		})
	}
}

func TestCheckContextClaimsWithoutKeyring(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r = r.WithContext(WithClaims(r.Context(), &Claims{ID: "link", Scopes: []string{"index:read"}}))
	if _, err := Check(nil, r, "index:read", time.Now()); err != nil {
		t.Fatalf("Check without keyring: %v", err)
	}
}

func TestRequireAcceptsContextClaims(t *testing.T) {
	k := testKeyring(t, 1)
	e := echo.New()
	var seen *Claims
	e.PUT("/o", func(c echo.Context) error {
		seen = ClaimsFrom(c)
		return c.NoContent(http.StatusCreated)
	}, Require(k, "storage:write", nil))
	link := &Claims{ID: "link", Scopes: []string{"storage:write"}}

	r := httptest.NewRequest(http.MethodPut, "/o", nil)
	r.Header.Set("Authorization", "Bearer not-a-token")
	r = r.WithContext(WithClaims(r.Context(), link))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	if rec.Code != http.StatusCreated || seen != link {
		t.Fatalf("status %d, claims %+v", rec.Code, seen)
	}

	r = httptest.NewRequest(http.MethodPut, "/o", nil)
	r = r.WithContext(WithClaims(r.Context(), &Claims{ID: "reader", Scopes: []string{"storage:read"}}))
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	assertEnvelope(t, rec, http.StatusForbidden, httpx.CodeForbidden, "")
}

// Authorize on claims verified elsewhere: none → missing, lacking the scope
// → scope, holding it → the claims.
func TestAuthorize(t *testing.T) {
	c := &Claims{ID: "t1", Scopes: []string{"storage:read"}}
	if _, err := Authorize(nil, "storage:read"); KindOf(err) != KindMissing {
		t.Errorf("nil claims: %v, want missing", err)
	}
	if _, err := Authorize(c, "storage:write"); KindOf(err) != KindScope {
		t.Errorf("wrong scope: %v, want scope", err)
	}
	if got, err := Authorize(c, "storage:read"); err != nil || got != c {
		t.Errorf("held scope: %v, %v", got, err)
	}
}
