package upstream

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/auth"
)

func TestLinkHeaders(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				type got struct {
					h      http.Header
					claims *auth.Claims
				}
				seen := make(chan got, 1)
				h := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					seen <- got{r.Header.Clone(), auth.ClaimsFromContext(r.Context())}
				})
				principal := LinkPrincipal(false)
				l := w.link(t, h, Options{Principal: principal,
					Token: func(context.Context) (string, error) { return "linktok", nil }})
				in := http.Header{"X-Corr-Id": {"c-1"}, "Accept": {"x/y"}, "Authorization": {"Bearer client"},
					"X-Ron-Tenant": {"evil"}, "X-Forwarded-For": {"6.6.6.6"}, "Request-Timeout": {"99"}}
				resp, err := l.Do(context.Background(), Call{Method: "GET", Path: "/o/x", Header: in,
					Tenant: "acme", ClientIP: "203.0.113.7", Proto: "https", Host: "gw.example", Prefix: "/edge",
					Deadline: time.Now().Add(1500 * time.Millisecond)})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				g := <-seen
				want := map[string]string{"X-Corr-Id": "c-1", "Accept": "x/y", "X-Ron-Tenant": "acme",
					"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "gw.example",
					"X-Forwarded-Prefix": "/edge", "Request-Timeout": "1.500"}
				for k, v := range want {
					if vs := g.h.Values(k); len(vs) != 1 || vs[0] != v {
						t.Errorf("%s = %q, want %q", k, vs, v)
					}
				}
				auth := g.h.Values("Authorization")
				if w.name == "http" && (len(auth) != 1 || auth[0] != "Bearer linktok" || g.claims != nil) {
					t.Errorf("HTTP link: Authorization %q, claims %v", auth, g.claims)
				}
				if w.name == "inproc" && (len(auth) != 0 || g.claims != principal) {
					t.Errorf("in-process link: Authorization %q, claims %v", auth, g.claims)
				}
				if in.Get("X-Ron-Tenant") != "evil" || in.Get("Authorization") != "Bearer client" {
					t.Error("Do modified the caller's header")
				}
			})
		})
	}
}

func TestLinkHeadersOmittedWhenEmpty(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			l := w.link(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen <- r.Header.Clone() }), Options{})
			resp, err := l.Do(context.Background(), Call{Method: "GET", Path: "/x",
				Header: http.Header{"X-Ron-Tenant": {"evil"}, "X-Forwarded-Prefix": {"/x"}, "Authorization": {"Bearer c"}}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := <-seen
			for _, k := range []string{"X-Ron-Tenant", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Prefix", "Authorization"} {
				if v := h.Values(k); len(v) != 0 {
					t.Errorf("%s = %q, want none", k, v)
				}
			}
			if h.Get("Request-Timeout") == "" {
				t.Error("no Request-Timeout")
			}
		})
	}
}

func TestRequestTimeoutFormat(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.001"}, {-time.Second, "0.001"}, {500 * time.Microsecond, "0.001"}, {time.Millisecond, "0.001"},
		{1500 * time.Millisecond, "1.500"}, {5 * time.Second, "5.000"}, {4999999 * time.Microsecond, "4.999"},
		{3600 * time.Second, "3600.000"},
	}
	for _, tc := range cases {
		if got := requestTimeout(tc.d); got != tc.want {
			t.Errorf("requestTimeout(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestPrincipalReachesRequire: the in-process principal and the minted HTTP
// token both pass the upstream's auth.Require, with the same scopes.
func TestPrincipalReachesRequire(t *testing.T) {
	k, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.PUT("/names/:name", func(c echo.Context) error { return c.NoContent(http.StatusCreated) }, auth.Require(k, "index:write", nil))
	e.GET("/o/:id", func(c echo.Context) error { return c.String(http.StatusOK, "bytes") }, auth.Require(k, "storage:read", nil))
	cases := []struct {
		name         string
		privateReads bool
		anonymous    bool
		method, path string
		status       int
	}{
		{"write allowed", false, false, "PUT", "/names/a", 201},
		{"read scope only with private reads", false, false, "GET", "/o/x", 403},
		{"private reads", true, false, "GET", "/o/x", 200},
		{"private reads still write", true, false, "PUT", "/names/a", 201},
		{"no principal or token", false, true, "PUT", "/names/a", 401},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				opt := Options{Name: "index"}
				if !tc.anonymous {
					opt.Principal, opt.Token = LinkPrincipal(tc.privateReads), MintLinkToken(k, tc.privateReads)
				}
				l := w.link(t, e, opt)
				resp, err := l.Do(context.Background(), Call{Method: tc.method, Path: tc.path,
					Header: http.Header{"Authorization": {"Bearer client-token"}}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
			})
		}
	}
}
