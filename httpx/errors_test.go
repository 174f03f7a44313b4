package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWriteErrorHeaders(t *testing.T) {
	cases := []struct {
		err        error
		status     int
		retryAfter string
		wwwAuth    string
	}{
		{NewError(429, CodeBusy, "x"), 429, "1", ""},
		{NewError(503, CodeDraining, "x").WithRetryAfter(5), 503, "5", ""},
		{&Error{Status: 503, Code: CodeNotReady}, 503, "1", ""},
		{NewError(401, CodeUnauthorized, "x"), 401, "", "Bearer"},
		{NewError(404, CodeNotFound, "x"), 404, "", ""},
		{http.ErrBodyNotAllowed, 500, "", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		rec.Header().Set("ETag", `"stale"`)
		WriteError(rec, "cid", c.err)
		h := rec.Header()
		if rec.Code != c.status || h.Get("Retry-After") != c.retryAfter || h.Get("WWW-Authenticate") != c.wwwAuth {
			t.Errorf("%v: %d %v", c.err, rec.Code, h)
		}
		if h.Get("ETag") != "" || h.Get("Content-Type") != "application/json" {
			t.Errorf("%v: representation headers left on an error: %v", c.err, h)
		}
		if !strings.Contains(rec.Body.String(), `"corr_id":"cid"`) {
			t.Errorf("%v: body %s", c.err, rec.Body)
		}
	}
	if strings.Contains(func() string {
		r := httptest.NewRecorder()
		WriteError(r, "", http.ErrBodyNotAllowed)
		return r.Body.String()
	}(), "body not allowed") {
		t.Error("internal error text leaked to the client")
	}
}

func TestDecodeError(t *testing.T) {
	e := DecodeError(409, []byte(`{"error":{"code":"hash_mismatch","message":"m","details":{"expected":"a"}}}`))
	if e.Status != 409 || e.Code != CodeHashMismatch || e.Details["expected"] != "a" {
		t.Errorf("%+v", e)
	}
	for status, code := range map[int]string{404: CodeNotFound, 502: CodeUpstreamUnavailable, 507: CodeInsufficientStorage, 418: CodeInternal} {
		if got := DecodeError(status, []byte("<html>")); got.Code != code || got.Status != status {
			t.Errorf("%d → %+v", status, got)
		}
	}
}

func TestLocalError(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	envelope := NewError(http.StatusPreconditionFailed, CodePreconditionFailed, "x").
		WithDetails(map[string]any{"current_version": uint64(7)})
	cases := []struct {
		name   string
		ctx    context.Context
		err    error
		status int
		code   string
	}{
		{"envelope kept", canceled, fmt.Errorf("wrapped: %w", envelope), 412, CodePreconditionFailed},
		{"cancel", canceled, errors.New("boom"), 503, CodeUpstreamUnavailable},
		{"deadline", expired, errors.New("boom"), 504, CodeTimeout},
		{"other", live, errors.New("boom"), 500, CodeInternal},
	}
	for _, c := range cases {
		he := AsError(LocalError(c.ctx, c.err))
		if he.Status != c.status || he.Code != c.code {
			t.Errorf("%s: %d %s", c.name, he.Status, he.Code)
		}
	}
	if LocalError(live, nil) != nil {
		t.Error("nil must stay nil")
	}
	he := AsError(LocalError(live, envelope))
	if he.Details["current_version"] != float64(7) || envelope.Details["current_version"] != uint64(7) {
		t.Errorf("details must go through JSON on a copy: %#v / %#v", he.Details, envelope.Details)
	}
}

func TestRequireJSONAndReadStrictJSON(t *testing.T) {
	for ct, ok := range map[string]bool{"application/json": true, "application/json; charset=utf-8": true,
		"text/plain": false, "": false, "application/json;;": false} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Content-Type", ct)
		if err := RequireJSON(r); (err == nil) != ok || (err != nil && AsError(err).Status != 415) {
			t.Errorf("Content-Type %q: %v", ct, err)
		}
	}
	var v struct{ A int }
	if err := ReadStrictJSON(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"A":1}`)), &v); err != nil || v.A != 1 {
		t.Fatalf("good body: %v %+v", err, v)
	}
	for _, body := range []string{`{"A":1}x`, `{"B":1}`, `nope`} {
		err := ReadStrictJSON(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), &v)
		if AsError(err).Code != CodeMalformed {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestWithReason: the reason joins the details, the others stay, the
// original error is not changed.
func TestWithReason(t *testing.T) {
	e := NewError(http.StatusNotFound, CodeNotFound, "x").WithDetails(map[string]any{"minzoom": 0})
	r := e.WithReason("zoom")
	if r.Details["reason"] != "zoom" || r.Details["minzoom"] != 0 || len(r.Details) != 2 {
		t.Fatalf("details %v", r.Details)
	}
	if _, ok := e.Details["reason"]; ok {
		t.Fatal("the original error was changed")
	}
}

func TestBodyAllowed(t *testing.T) {
	for status, want := range map[int]bool{100: false, 103: false, 200: true, 204: false, 206: true, 304: false, 404: true, 500: true} {
		if got := BodyAllowed(status); got != want {
			t.Errorf("BodyAllowed(%d) = %v, want %v", status, got, want)
		}
	}
}
