package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// bare is a Role with its settings, metrics and middleware but nothing
// opened: the routes of docs/edge.md §1 over fake handlers, behind the shared chain.
type bare struct {
	r *Role
	h http.Handler
	m *runtime.Metrics
}

// fakeHandlers answer 200 naming the route; the tile one varies on
// Accept-Encoding as tiles do.
func fakeHandlers() handlers {
	named := func(name string) echo.HandlerFunc {
		return func(c echo.Context) error {
			if name == "tiles" {
				c.Response().Header().Set("Vary", "Accept-Encoding")
			}
			return c.String(http.StatusOK, name+" "+c.Request().Method)
		}
	}
	return handlers{object: named("object"), packs: named("packs"), tiles: named("tiles"), assets: named("assets")}
}

// newBare builds a bare role of DefaultConfig changed by mutate, serving hs.
func newBare(t *testing.T, mutate func(*Config), hs handlers) *bare {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if mutate != nil {
		mutate(&cfg)
	}
	m := runtime.NewMetrics(nil)
	r := New(Options{Config: cfg, Env: module.Env{Metrics: m, Log: zerolog.Nop()}})
	s, err := newSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.set.Store(s)
	r.met = newEdgeMetrics(m)
	e := r.newServer(cfg).Echo()
	r.mountWith(e, hs)
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	return &bare{r: r, h: e, m: m}
}

// answer is a recorded response with its decoded error envelope, if any.
type answer struct {
	code   int
	header http.Header
	body   string
	env    struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
}

// reason is details.reason of the envelope ("" without).
func (a answer) reason() string {
	s, _ := a.env.Error.Details["reason"].(string)
	return s
}

// do serves one request; target is used as is (absolute-form included).
func do(t *testing.T, h http.Handler, method, target string, hdr ...string) answer {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	a := answer{code: res.StatusCode, header: res.Header, body: string(body)}
	if res.Header.Get("Content-Type") == "application/json" {
		_ = json.Unmarshal(body, &a.env)
	}
	return a
}

// counter reads ron_<name>{role="edge",labels…}.
func counter(m *runtime.Metrics, name string, labels ...string) uint64 {
	return m.Counter(name, append([]string{"role", roleName}, labels...)...).Get()
}
